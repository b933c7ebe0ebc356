/* rk conformance: the conformance suite (tests/conformance), built into the
 * tool, so an installed rk checks the library it runs on. */
#include "commands.h"
#include "conformance/conformance.h"

int rk_cmd_conformance(int argc, char **argv) { return rk_conformance_main(argc, argv); }
