// RUN: %sirenc-opt %s | %sirenc-opt | filecheck %s
// RUN: %sirenc-opt %s --print-op-generic | %sirenc-opt | filecheck %s
// RUN: %xdsl-opt %s | filecheck %s
// #sirenrt.layout, the C runtime's view of a compiled model, parses, verifies
// and prints back unchanged from the custom and the generic form, and plain
// xdsl-opt knows it through sirenc's xdsl.universe entry point.
// lower-smc-to-llvm attaches it to @siren_resume as sirenrt.layout: frame size
// and result offset in bytes, data files by file id, error sites by site id,
// and per resume point the frame words holding list handles.

builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<40 : i64, 8 : i64, ["/data.csv", "/abs/data.csv"], [loc("m.si":3:9), loc("<unknown>":0:0)], [[1 : i32, 24 : i64, "Lb"], [2 : i32, 32 : i64, "LPfLf"]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
  // The smallest frame: the pc's word, and a result of no words (unit).
  llvm.func @unit_resume(%c2: !llvm.ptr, %f2: !llvm.ptr, %w2: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<8 : i64, 8 : i64, [], [], []>} {
    %z = llvm.mlir.constant(0 : i32) : i32
    llvm.return %z : i32
  }
}

// CHECK:      llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32
// CHECK-SAME:   attributes {sirenrt.layout = #sirenrt.layout<40 : i64, 8 : i64, ["/data.csv", "/abs/data.csv"], [loc("m.si":3:9), loc("<unknown>":0:0)], {{\[\[}}1 : i32, 24 : i64, "Lb"], [2 : i32, 32 : i64, "LPfLf"]]>} {
// CHECK:      llvm.func @unit_resume(%c2: !llvm.ptr, %f2: !llvm.ptr, %w2: !llvm.ptr) -> i32
// CHECK-SAME:   attributes {sirenrt.layout = #sirenrt.layout<8 : i64, 8 : i64, [], [], []>} {
