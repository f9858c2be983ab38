/*
 * main.c - the `scenario` program: the example controllers registered,
 * then libscenario's command line (scn_main).
 */
#include "scn/run.h"

int main(int argc, char **argv)
{
    scn_register_examples();
    return scn_main(argc, argv);
}
