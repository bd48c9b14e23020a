/* types.c — type descriptors (sirenrt.h's grammar: T := 'f' | 'b' | 'S' | 'u' | 'P' T T | 'L' T, and a
 * frame result's 'V' k T): how
 * many words a value of a type takes in a frame, a list cell or a result, which every walk over those
 * words reads first. */
#include "base.h"

int64_t rt_type_words(const char *desc, const char **end) {
  switch (*desc) {
    case 'f':
    case 'b':
    case 'S':
      *end = desc + 1;
      return 1;
    case 'u':
      *end = desc + 1;
      return 0;
    case 'L': {
      if (rt_type_words(desc + 1, end) < 0) return -1;
      return 1;
    }
    case 'V':
      if (desc[1] < '0' || desc[1] > '9' || (desc[2] != 'f' && desc[2] != 'b')) {
        *end = desc;
        return -1;
      }
      *end = desc + 3;
      return 1;
    case 'P': {
      int64_t a = rt_type_words(desc + 1, end);
      if (a < 0) return -1;
      int64_t b = rt_type_words(*end, end);
      return b < 0 ? -1 : a + b;
    }
    default:
      *end = desc;
      return -1;
  }
}
