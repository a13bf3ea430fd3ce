/* names.h: comma-separated name lists, as the command line and sweep options give them
 * ("resnet50,vgg16"). */
#ifndef DP_NAMES_H
#define DP_NAMES_H

#include <stdbool.h>

/* Whether name is one of the entries of the comma-separated list, compared without regard to
 * case; false when list is NULL or empty. Callers for whom "no list" means "every name" test
 * for NULL themselves. */
bool dp_name_in_list(const char *list, const char *name);

#endif
