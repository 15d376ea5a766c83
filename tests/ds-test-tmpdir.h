/* ds-test-tmpdir.h: a temporary folder for a test's files. */
#pragma once

#include <glib.h>

/* A new folder under the system's temporary folder, named from `prefix` ("ds-test-npy");
 * the test fails if it cannot be made. */
char *ds_test_tmpdir_new(const char *prefix);
/* Removes the folder with its files (it holds no subfolders) and frees `dir`. */
void ds_test_tmpdir_free(char *dir);
