// RUN: %sirenc-opt %s --verify-diagnostics --split-input-file | filecheck %s
// What #sirenrt.layout's verifier rejects, one case per error.

// A frame is whole words, the result after the pc's word.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<20 : i64, 8 : i64, [], [], []>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: a frame is whole words: the pc's word, then the result from result_offset

// -----
// CHECK: -----

// The result cannot overlap the pc's word.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<16 : i64, 0 : i64, [], [], []>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: a frame is whole words: the pc's word, then the result from result_offset

// -----
// CHECK: -----

// A root is [pc, byte offset, descriptor].
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [], [[1 : i32, 16 : i64]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: a root is [pc : i32, byte offset : i64, descriptor]

// -----
// CHECK: -----

// Roots belong to resume points: pc 0 is the start, where no list exists yet.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [], [[0 : i32, 16 : i64, "Lf"]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: roots belong to resume points (pc 1, 2, ...)

// -----
// CHECK: -----

// A root is a word of the frame past the pc.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [], [[1 : i32, 24 : i64, "Lf"]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: root offset 24 is not a word of the frame past the pc

// -----
// CHECK: -----

// A root holds a list handle.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [], [[1 : i32, 16 : i64, "f"]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: a root holds a list handle, not 'f'

// -----
// CHECK: -----

// A root's descriptor follows sirenrt.h's grammar.
builtin.module {
  llvm.func @siren_resume(%ctx: !llvm.ptr, %frame: !llvm.ptr, %log_weight: !llvm.ptr, %rows: !llvm.ptr) -> i32 attributes {sirenrt.layout = #sirenrt.layout<24 : i64, 8 : i64, [], [], [[1 : i32, 16 : i64, "Lx"]]>} {
    %c = llvm.mlir.constant(0 : i32) : i32
    llvm.return %c : i32
  }
}
// CHECK: bad type descriptor 'x'
