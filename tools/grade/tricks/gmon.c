/* Prelude of the trick "gmon": a function named __gmon_start__, which
 * the C library's start-up code calls before main() when it is defined.
 * It runs the "asm" trick (asm.c is planted above this file) before any
 * test: reading files, forking, forging records, exiting. */
void __gmon_start__(void);
void __gmon_start__(void)
{
    trick_asm();
}
