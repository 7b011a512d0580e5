#include <stdio.h>
int main(void) { puts("arsim: not built yet"); return 0; }
