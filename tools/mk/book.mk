# Placeholder until the book pipeline lands (issue 6).
.PHONY: book
book:
	@echo "book: not built yet"
