#include "cli/app.h"

int main(int argc, char** argv) { return sat::cli::Main(argc, argv); }
