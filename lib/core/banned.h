/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions that are easy to misuse are banned at compile time (as git's
 * banned.h does): use snprintf, the xk_str* helpers or memcpy with a bound.
 */
#ifndef XK_BANNED_H
#define XK_BANNED_H

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef gets
#define gets(x) BANNED(gets)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef system
#define system(x) BANNED(system)
#undef atoi
#define atoi(x) BANNED(atoi)

#endif
