// RUN: %sirenc-opt %s | %sirenc-opt | filecheck %s --check-prefixes=CHECK,CUSTOM
// RUN: %sirenc-opt %s --print-op-generic | %sirenc-opt --print-op-generic | filecheck %s --check-prefixes=CHECK,GENERIC
// RUN: %sirenc-opt %s --print-op-generic | %sirenc-opt | filecheck %s --check-prefixes=CHECK,CUSTOM
// Every op and type of the siren dialect parses, verifies and prints back
// unchanged, from the custom and from the generic form. The siren ops have no
// custom syntax of their own: both forms print them generically, only the
// builtin and func ops around them differ.

builtin.module {
  func.func @main(%l: !siren.list<f64>, %b: i1) -> f64 {
    %c = "siren.const"() <{value = 1.500000e+00 : f64}> : () -> f64
    %t = "siren.const"() <{value = true}> : () -> i1
    %u = "siren.const"() <{value}> : () -> !siren.unit
    %s = "siren.const"() <{value = "data.csv"}> : () -> !siren.string
    %add = "siren.add"(%c, %c) : (f64, f64) -> f64
    %sub = "siren.sub"(%c, %c) : (f64, f64) -> f64
    %mul = "siren.mul"(%c, %c) : (f64, f64) -> f64
    %div = "siren.div"(%c, %c) : (f64, f64) -> f64
    %neg = "siren.neg"(%c) : (f64) -> f64
    %eq = "siren.eq"(%l, %l) : (!siren.list<f64>, !siren.list<f64>) -> i1
    %lt = "siren.lt"(%c, %c) : (f64, f64) -> i1
    %p = "siren.pair"(%c, %b) : (f64, i1) -> !siren.pair<f64, i1>
    %fst = "siren.fst"(%p) : (!siren.pair<f64, i1>) -> f64
    %snd = "siren.snd"(%p) : (!siren.pair<f64, i1>) -> i1
    %nil = "siren.nil"() : () -> !siren.list<f64>
    %cons = "siren.cons"(%c, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64>
    %hd = "siren.hd"(%cons) <{site = 3 : i32}> : (!siren.list<f64>) -> f64
    %tl = "siren.tl"(%cons) : (!siren.list<f64>) -> !siren.list<f64>
    %len = "siren.len"(%l) : (!siren.list<f64>) -> f64
    %rev = "siren.rev"(%l) : (!siren.list<f64>) -> !siren.list<f64>
    %range = "siren.range"(%c, %len) : (f64, f64) -> !siren.list<f64>
    %rows = "siren.file_read"(%s) : (!siren.string) -> !siren.list<!siren.list<f64>>
    %if = "siren.if"(%b) ({
      "siren.yield"(%c) : (f64) -> ()
    }, {
      "siren.yield"(%neg) : (f64) -> ()
    }) : (i1) -> f64
    %fold = "siren.fold"(%l, %c) ({
    ^bb0(%e: f64, %acc: f64):
      %acc2 = "siren.add"(%e, %acc) : (f64, f64) -> f64
      "siren.yield"(%acc2) : (f64) -> ()
    }) : (!siren.list<f64>, f64) -> f64
    %map = "siren.map"(%l) ({
    ^bb1(%y: f64):
      %gt = "siren.lt"(%c, %y) : (f64, f64) -> i1
      "siren.yield"(%gt) : (i1) -> ()
    }) : (!siren.list<f64>) -> !siren.list<i1>
    %d = "siren.dist"(%c, %c) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
    %x = "siren.assume"(%d) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64
    %db = "siren.dist"(%c) <{family = "bernoulli"}> : (f64) -> !siren.dist<"bernoulli">
    %z = "siren.assume"(%db) <{var = "z", annotation = "sample"}> : (!siren.dist<"bernoulli">) -> i1
    %dd = "siren.dist"(%p) <{family = "delta"}> : (!siren.pair<f64, i1>) -> !siren.dist<"delta">
    %w = "siren.assume"(%dd) <{var = "w", annotation = "symbolic"}> : (!siren.dist<"delta">) -> !siren.pair<f64, i1>
    %o = "siren.observe"(%d, %c) : (!siren.dist<"gaussian">, f64) -> !siren.unit
    %r = "siren.resample"() : () -> !siren.unit
    func.return %x : f64
  }
}

// CUSTOM:       builtin.module {
// CUSTOM-NEXT:    func.func @main(%l: !siren.list<f64>, %b: i1) -> f64 {
// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() <{sym_name = "main", function_type = (!siren.list<f64>, i1) -> f64}> ({
// GENERIC-NEXT:   ^bb0(%l: !siren.list<f64>, %b: i1):
// CHECK-NEXT:       %c = "siren.const"() <{value = 1.500000e+00 : f64}> : () -> f64
// CHECK-NEXT:       %t = "siren.const"() <{value = true}> : () -> i1
// CHECK-NEXT:       %u = "siren.const"() <{value}> : () -> !siren.unit
// CHECK-NEXT:       %s = "siren.const"() <{value = "data.csv"}> : () -> !siren.string
// CHECK-NEXT:       %add = "siren.add"(%c, %c) : (f64, f64) -> f64
// CHECK-NEXT:       %sub = "siren.sub"(%c, %c) : (f64, f64) -> f64
// CHECK-NEXT:       %mul = "siren.mul"(%c, %c) : (f64, f64) -> f64
// CHECK-NEXT:       %div = "siren.div"(%c, %c) : (f64, f64) -> f64
// CHECK-NEXT:       %neg = "siren.neg"(%c) : (f64) -> f64
// CHECK-NEXT:       %eq = "siren.eq"(%l, %l) : (!siren.list<f64>, !siren.list<f64>) -> i1
// CHECK-NEXT:       %lt = "siren.lt"(%c, %c) : (f64, f64) -> i1
// CHECK-NEXT:       %p = "siren.pair"(%c, %b) : (f64, i1) -> !siren.pair<f64, i1>
// CHECK-NEXT:       %fst = "siren.fst"(%p) : (!siren.pair<f64, i1>) -> f64
// CHECK-NEXT:       %snd = "siren.snd"(%p) : (!siren.pair<f64, i1>) -> i1
// CHECK-NEXT:       %nil = "siren.nil"() : () -> !siren.list<f64>
// CHECK-NEXT:       %cons = "siren.cons"(%c, %nil) : (f64, !siren.list<f64>) -> !siren.list<f64>
// CHECK-NEXT:       %hd = "siren.hd"(%cons) <{site = 3 : i32}> : (!siren.list<f64>) -> f64
// CHECK-NEXT:       %tl = "siren.tl"(%cons) : (!siren.list<f64>) -> !siren.list<f64>
// CHECK-NEXT:       %len = "siren.len"(%l) : (!siren.list<f64>) -> f64
// CHECK-NEXT:       %rev = "siren.rev"(%l) : (!siren.list<f64>) -> !siren.list<f64>
// CHECK-NEXT:       %range = "siren.range"(%c, %len) : (f64, f64) -> !siren.list<f64>
// CHECK-NEXT:       %rows = "siren.file_read"(%s) : (!siren.string) -> !siren.list<!siren.list<f64>>
// CHECK-NEXT:       %if = "siren.if"(%b) ({
// CHECK-NEXT:         "siren.yield"(%c) : (f64) -> ()
// CHECK-NEXT:       }, {
// CHECK-NEXT:         "siren.yield"(%neg) : (f64) -> ()
// CHECK-NEXT:       }) : (i1) -> f64
// CHECK-NEXT:       %fold = "siren.fold"(%l, %c) ({
// CHECK-NEXT:       ^bb0(%e: f64, %acc: f64):
// CHECK-NEXT:         %acc2 = "siren.add"(%e, %acc) : (f64, f64) -> f64
// CHECK-NEXT:         "siren.yield"(%acc2) : (f64) -> ()
// CHECK-NEXT:       }) : (!siren.list<f64>, f64) -> f64
// CHECK-NEXT:       %map = "siren.map"(%l) ({
// CHECK-NEXT:       ^bb0(%y: f64):
// CHECK-NEXT:         %gt = "siren.lt"(%c, %y) : (f64, f64) -> i1
// CHECK-NEXT:         "siren.yield"(%gt) : (i1) -> ()
// CHECK-NEXT:       }) : (!siren.list<f64>) -> !siren.list<i1>
// CHECK-NEXT:       %d = "siren.dist"(%c, %c) <{family = "gaussian"}> : (f64, f64) -> !siren.dist<"gaussian">
// CHECK-NEXT:       %x = "siren.assume"(%d) <{var = "x"}> : (!siren.dist<"gaussian">) -> f64
// CHECK-NEXT:       %db = "siren.dist"(%c) <{family = "bernoulli"}> : (f64) -> !siren.dist<"bernoulli">
// CHECK-NEXT:       %z = "siren.assume"(%db) <{var = "z", annotation = "sample"}> : (!siren.dist<"bernoulli">) -> i1
// CHECK-NEXT:       %dd = "siren.dist"(%p) <{family = "delta"}> : (!siren.pair<f64, i1>) -> !siren.dist<"delta">
// CHECK-NEXT:       %w = "siren.assume"(%dd) <{var = "w", annotation = "symbolic"}> : (!siren.dist<"delta">) -> !siren.pair<f64, i1>
// CHECK-NEXT:       %o = "siren.observe"(%d, %c) : (!siren.dist<"gaussian">, f64) -> !siren.unit
// CHECK-NEXT:       %r = "siren.resample"() : () -> !siren.unit
// CUSTOM-NEXT:      func.return %x : f64
// GENERIC-NEXT:     "func.return"(%x) : (f64) -> ()
