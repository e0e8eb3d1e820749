/*
 * icu_oracle answers collation sort keys from the system's ICU, the library
 * MongoDB's collations are made of; TestAgainstICU's -rewrite runs it to
 * write testdata/icu.txt. Build: cc icu_oracle.c -licui18n -licuuc.
 *
 * Input lines:
 *   C <locale> <strength 1-5> <caseLevel 0|1> <caseFirst off|upper|lower>
 *     <alternate non-ignorable|shifted> <maxVariable punct|space>
 *     <backwards 0|1> <numericOrdering 0|1>   opens a collator; "-" for an
 *     option leaves the locale's default, as MongoDB leaves an option the
 *     collation document does not name
 *   K <utf-8 string as hex>                   prints its sort key as hex
 * Errors are printed as "E <message>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ucol.h>
#include <unicode/ustring.h>

static int unhex(const char *s, char *out, int max) {
	int n = 0;
	while (s[0] && s[1] && s[0] != '\n' && n < max) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1) return -1;
		out[n++] = (char)v;
		s += 2;
	}
	return n;
}

int main(void) {
	static char line[1 << 16], utf8[1 << 15];
	static UChar u16[1 << 15];
	static uint8_t key[1 << 16];
	UCollator *coll = NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof line, stdin)) {
		UErrorCode err = U_ZERO_ERROR;
		if (line[0] == 'C') {
			char loc[64], st[8], cl[8], cf[16], alt[32], mv[16], bw[8], num[8];
			if (sscanf(line, "C %63s %7s %7s %15s %31s %15s %7s %7s", loc, st, cl, cf, alt, mv, bw, num) != 8) {
				printf("E bad collator line\n");
				continue;
			}
			if (coll) ucol_close(coll);
			coll = ucol_open(loc, &err);
			UColAttributeValue strengths[] = {0, UCOL_PRIMARY, UCOL_SECONDARY, UCOL_TERTIARY, UCOL_QUATERNARY, UCOL_IDENTICAL};
			if (strcmp(st, "-")) ucol_setAttribute(coll, UCOL_STRENGTH, strengths[atoi(st) % 6], &err);
			if (strcmp(cl, "-")) ucol_setAttribute(coll, UCOL_CASE_LEVEL, atoi(cl) ? UCOL_ON : UCOL_OFF, &err);
			if (strcmp(cf, "-")) ucol_setAttribute(coll, UCOL_CASE_FIRST, !strcmp(cf, "upper") ? UCOL_UPPER_FIRST : !strcmp(cf, "lower") ? UCOL_LOWER_FIRST : UCOL_OFF, &err);
			if (strcmp(alt, "-")) ucol_setAttribute(coll, UCOL_ALTERNATE_HANDLING, !strcmp(alt, "shifted") ? UCOL_SHIFTED : UCOL_NON_IGNORABLE, &err);
			if (strcmp(mv, "-")) ucol_setMaxVariable(coll, !strcmp(mv, "space") ? UCOL_REORDER_CODE_SPACE : UCOL_REORDER_CODE_PUNCTUATION, &err);
			if (strcmp(bw, "-")) ucol_setAttribute(coll, UCOL_FRENCH_COLLATION, atoi(bw) ? UCOL_ON : UCOL_OFF, &err);
			if (strcmp(num, "-")) ucol_setAttribute(coll, UCOL_NUMERIC_COLLATION, atoi(num) ? UCOL_ON : UCOL_OFF, &err);
			if (U_FAILURE(err)) printf("E %s\n", u_errorName(err));
			else printf("ok\n");
		} else if (line[0] == 'K' && coll) {
			int n = unhex(line + 2, utf8, sizeof utf8);
			int32_t len = 0;
			u_strFromUTF8(u16, sizeof u16 / sizeof u16[0], &len, utf8, n, &err);
			if (n < 0 || U_FAILURE(err)) {
				printf("E %s\n", u_errorName(err));
				continue;
			}
			int32_t k = ucol_getSortKey(coll, u16, len, key, sizeof key);
			for (int i = 0; i < k; i++) printf("%02x", key[i]);
			printf("\n");
		} else {
			printf("E bad line\n");
		}
	}
	return 0;
}
