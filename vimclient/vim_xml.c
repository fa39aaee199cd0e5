/* vim_xml.c: (to be written) see vim_internal.h for what this file owns. */
#include "vim_internal.h"
