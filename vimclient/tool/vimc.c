/* vimc.c: command-line front end to vimclient (to be written). */
#include <stdio.h>
int main(void)
{
    fprintf(stderr, "vimc: not yet implemented\n");
    return 2;
}
