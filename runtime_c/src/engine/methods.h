/* methods.h — the symbolic inference methods' engine ids and names.
 * GENERATED from sirenc/methods.py by `python -m sirenc.runtime.methods_header`; do not edit.
 * Private to the runtime.  A checkpoint of a symbolic state holds its method's id. */
#ifndef RT_METHODS_H
#define RT_METHODS_H

/* The inference method a state serves: which operations assume, observe, value and mean run. */
enum {
  RT_METHOD_SSI = 0, /* semi-symbolic inference */
  RT_METHOD_DS = 1, /* delayed sampling */
  RT_METHOD_BP = 2, /* belief propagation */
  RT_N_METHODS = 3
};

/* X(ID, name) for every method with an engine, in id order: RT_METHOD_##ID, and the name a
 * model's descriptor gives it. */
#define RT_METHODS(X) \
  X(SSI, "ssi") \
  X(DS, "ds") \
  X(BP, "bp")

#endif /* RT_METHODS_H */
