/* The ctest program: the same runner as `rk conformance`. */
#include "conformance.h"

int main(int argc, char **argv) { return rk_conformance_main(argc, argv); }
