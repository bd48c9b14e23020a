// RUN: %sirenc-opt -p lower-smc-to-llvm %s | filecheck %s
// smc.next_row reads a row the table holds in place, through the sirenrt_rows that the
// runtime hands the resume (its fourth argument; row r < n_rows: its handle is
// SIRENRT_FIRST_ROW | r << 23 when row_start[r + 1] > row_start[r], else nil), and
// asks sirenrt_stream_row for any other; answered SIRENRT_NEED (-3)
// it saves its point in the pc and returns NEED_ROW (2). Re-entry at that point
// repeats the request: the resume block starts at the op right before it, the
// reload of its index, which spill-across-suspends put there (its contract).
// `more` is the answer != SIRENRT_END (-2); past the end the row is -1 (nil).
// The streamed data file is file 0 of the layout. The row's only use is smc.head, so the
// row's first value is read in place along with the row (when it has one): the body gets it,
// and whether it was read, as two more block arguments, and runs the head only when it was
// not (streamed in, or an empty row). That head reads the row in place too, when the handle
// is such a row (the bits other than r's are SIRENRT_FIRST_ROW's) and the row is not empty;
// else it calls sirenrt_list_head_word, whose answers and errors are the runtime's. Both calls
// are on rare paths: marked sirenc.cold, which the LLVM text makes `cold`. Here a
// streamed fold, as lower-siren-to-smc and spill-across-suspends leave it.

builtin.module {
  "smc.particle"() <{sym_name = "main", model = #smc.model<"f", true, "", "/data.csv", 2 : i64, []>}> ({
    %zero = arith.constant 0 : i64
    %acc0 = arith.constant 0.000000e+00 : f64
    %r:3 = scf.while (%i = %zero, %acc = %acc0) : (i64, f64) -> (i64, !smc.list<"f">, f64) {
      "smc.frame_store"(%acc) <{slot = 1 : i64}> : (f64) -> ()
      "smc.frame_store"(%i) <{slot = 0 : i64}> : (i64) -> ()
      %il = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %more, %row = "smc.next_row"(%il) <{point = 1 : i32}> : (i64) -> (i1, !smc.list<"f">)
      %il2 = "smc.frame_load"() <{slot = 0 : i64}> : () -> i64
      %accl = "smc.frame_load"() <{slot = 1 : i64}> : () -> f64
      scf.condition(%more) %il2, %row, %accl : i64, !smc.list<"f">, f64
    } do {
    ^bb0(%j: i64, %rw: !smc.list<"f">, %a: f64):
      %y = "smc.head"(%rw) : (!smc.list<"f">) -> f64
      %s = arith.addf %a, %y : f64
      %one = arith.constant 1 : i64
      %k = arith.addi %j, %one : i64
      scf.yield %k, %s : i64, f64
    }
    "smc.finish"(%r#2) : (f64) -> ()
  }) : () -> ()
}

// CHECK:      llvm.func @siren_resume(%[[CTX:.*]]: !llvm.ptr, %[[FRAME:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[ROWS:.*]]: !llvm.ptr) -> i32
// CHECK-SAME:   #sirenrt.layout<24 : i64, 8 : i64, ["/data.csv"], [loc("<unknown>":0:0)], []>
// CHECK-NEXT:   %[[PC:.*]] = llvm.load %[[FRAME]] : !llvm.ptr -> i32
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[AT1:.*]] = llvm.icmp "eq" %[[PC]], %[[ONE]] : i32
// CHECK-NEXT:   llvm.cond_br %[[AT1]], ^[[RETRY:bb[0-9]+]], ^{{bb[0-9]+}}

// The loop header stores the index and the accumulator, then asks for the row.
// CHECK:      ^[[HEADER:bb[0-9]+]](%[[I:.*]]: i64, %[[ACC:.*]]: f64):
// CHECK-NEXT:   %[[S1:.*]] = llvm.getelementptr inbounds %[[FRAME]][16]
// CHECK-NEXT:   llvm.store %[[ACC]], %[[S1]] : f64, !llvm.ptr
// CHECK-NEXT:   %[[S0:.*]] = llvm.getelementptr inbounds %[[FRAME]][8]
// CHECK-NEXT:   llvm.store %[[I]], %[[S0]] : i64, !llvm.ptr
// CHECK-NEXT:   llvm.br ^[[RETRY]]

// The body: a row is a list handle (i64) here; the head is the value read in place when
// there is one.
// CHECK-NEXT: ^{{bb[0-9]+}}(%{{.*}}: i64, %[[RW:.*]]: i64, %{{.*}}: f64, %[[READ:.*]]: i1, %[[V:.*]]: f64):
// CHECK-NEXT:   llvm.cond_br %[[READ]], ^[[FAST:bb[0-9]+]], ^[[SLOW:bb[0-9]+]]

// The request, from the index's reload on: also where re-entry at point 1 starts.
// CHECK:      ^[[RETRY]]:
// CHECK-NEXT:   %[[IP:.*]] = llvm.getelementptr inbounds %[[FRAME]][8] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:   %[[IL:.*]] = llvm.load %[[IP]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[NP2:.*]] = llvm.getelementptr inbounds %[[ROWS]][16]
// CHECK-NEXT:   %[[N2:.*]] = llvm.load %[[NP2]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[HELD:.*]] = llvm.icmp "ult" %[[IL]], %[[N2]] : i64
// CHECK-NEXT:   llvm.cond_br %[[HELD]], ^[[INLINE:bb[0-9]+]], ^[[CALL:bb[0-9]+]]
// CHECK-NEXT: ^[[INLINE]]:
// CHECK-NEXT:   %[[RSP:.*]] = llvm.getelementptr inbounds %[[ROWS]][8]
// CHECK-NEXT:   %[[RS:.*]] = llvm.load %[[RSP]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[AT0:.*]] = llvm.getelementptr inbounds %[[RS]][%[[IL]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[START:.*]] = llvm.load %[[AT0]] : !llvm.ptr -> i64
// CHECK:        %[[END_AT:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:   %[[NONEMPTY:.*]] = llvm.icmp "slt" %[[START]], %[[END_AT]] : i64
// CHECK:        %[[HANDLE:.*]] = llvm.or %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:   %[[NIL0:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[INROW:.*]] = llvm.select %[[NONEMPTY]], %[[HANDLE]], %[[NIL0]] : i1, i64
// The one element read needs a row of at least one value.
// CHECK-NEXT:   %[[LONG:.*]] = llvm.icmp "slt" %[[START]], %[[END_AT]] : i64
// CHECK-NEXT:   %[[NO:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:   %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:   llvm.cond_br %[[LONG]], ^[[LOAD:bb[0-9]+]], ^[[DONE:bb[0-9]+]](%[[NO]], %[[ZERO]] : i1, f64)
// CHECK-NEXT: ^[[CALL]]:
// CHECK-NEXT:   %[[SITE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[CALLED:.*]] = llvm.call @sirenrt_stream_row(%[[CTX]], %[[IL]], %[[SITE]]) {sirenc.cold} : (!llvm.ptr, i64, i32) -> i64
// CHECK-NEXT:   %[[NO2:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT:   %[[ZERO2:.*]] = llvm.mlir.constant(0.000000e+00 : f64) : f64
// CHECK-NEXT:   llvm.br ^[[JOIN:bb[0-9]+]](%[[CALLED]], %[[NO2]], %[[ZERO2]] : i64, i1, f64)
// CHECK-NEXT: ^[[JOIN]](%[[ANSWER:.*]]: i64, %[[READ0:.*]]: i1, %[[V0:.*]]: f64):
// CHECK-NEXT:   %[[NEED:.*]] = llvm.mlir.constant(-3) : i64
// CHECK-NEXT:   %[[WAIT:.*]] = llvm.icmp "eq" %[[ANSWER]], %[[NEED]] : i64
// CHECK-NEXT:   llvm.cond_br %[[WAIT]], ^[[SUSPEND:bb[0-9]+]], ^[[GO:bb[0-9]+]]
// The row's element 0: vals[row_start[r]].
// CHECK-NEXT: ^[[LOAD]]:
// CHECK-NEXT:   %[[VP:.*]] = llvm.getelementptr inbounds %[[ROWS]][0]
// CHECK-NEXT:   %[[VALS:.*]] = llvm.load %[[VP]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[AT:.*]] = llvm.getelementptr inbounds %[[VALS]][%[[START]]] : (!llvm.ptr, i64) -> !llvm.ptr, i64
// CHECK-NEXT:   %[[WORD:.*]] = llvm.load %[[AT]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[X:.*]] = llvm.bitcast %[[WORD]] : i64 to f64
// CHECK-NEXT:   %[[YES:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT:   llvm.br ^[[DONE]](%[[YES]], %[[X]] : i1, f64)
// CHECK-NEXT: ^[[DONE]](%[[R:.*]]: i1, %[[XR:.*]]: f64):
// CHECK-NEXT:   llvm.br ^[[JOIN]](%[[INROW]], %[[R]], %[[XR]] : i64, i1, f64)
// CHECK-NEXT: ^[[SUSPEND]]:
// CHECK-NEXT:   %[[P1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.store %[[P1]], %[[FRAME]] : i32, !llvm.ptr
// CHECK-NEXT:   %[[NEED_ROW:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT:   llvm.return %[[NEED_ROW]] : i32
// CHECK-NEXT: ^[[GO]]:
// CHECK-NEXT:   %[[END:.*]] = llvm.mlir.constant(-2) : i64
// CHECK-NEXT:   %[[MORE:.*]] = llvm.icmp "ne" %[[ANSWER]], %[[END]] : i64
// CHECK-NEXT:   %[[NIL:.*]] = llvm.mlir.constant(-1) : i64
// CHECK-NEXT:   %[[ROW:.*]] = llvm.select %[[MORE]], %[[ANSWER]], %[[NIL]] : i1, i64
// CHECK:        llvm.cond_br %[[MORE]], ^{{bb[0-9]+}}(%{{.*}}, %[[ROW]], %{{.*}}, %[[READ0]], %[[V0]] : i64, i64, f64, i1, f64), ^{{bb[0-9]+}}(%{{.*}}, %[[ROW]], %{{.*}}, %[[READ0]], %[[V0]] : i64, i64, f64, i1, f64)

// Read in place, the value; else the head, which decodes the handle to read a row of file 0
// in place, and otherwise calls the runtime.
// CHECK-NEXT: ^[[FAST]]:
// CHECK-NEXT:   llvm.br ^[[MERGE:bb[0-9]+]](%[[V]] : f64)
// CHECK-NEXT: ^[[SLOW]]:
// CHECK:        %[[MASK:.*]] = llvm.mlir.constant(-36028797010575361) : i64
// CHECK-NEXT:   %[[OTHER:.*]] = llvm.and %[[RW]], %[[MASK]] : i64
// CHECK-NEXT:   %[[FIRST:.*]] = llvm.mlir.constant(6917529027641081856) : i64
// CHECK-NEXT:   %[[IS_ROW:.*]] = llvm.icmp "eq" %[[OTHER]], %[[FIRST]] : i64
// CHECK:        %[[RN:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:   %[[NP:.*]] = llvm.getelementptr inbounds %[[ROWS]][16]
// CHECK-NEXT:   %[[N:.*]] = llvm.load %[[NP]] : !llvm.ptr -> i64
// CHECK-NEXT:   %[[IN:.*]] = llvm.icmp "ult" %[[RN]], %[[N]] : i64
// CHECK-NEXT:   %[[READABLE:.*]] = llvm.and %[[IS_ROW]], %[[IN]] : i1
// CHECK-NEXT:   llvm.cond_br %[[READABLE]]
// CHECK-NEXT: ^[[MERGE]](%[[Y:.*]]: f64):
// CHECK-NEXT:   %{{.*}} = llvm.fadd %{{.*}}, %[[Y]] : f64
// CHECK:        llvm.br ^[[HEADER]](
// CHECK:        llvm.call @sirenrt_list_head_word(%[[CTX]], %[[RW]], %{{.*}}, %{{.*}}) {sirenc.cold}
