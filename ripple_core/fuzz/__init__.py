"""A differential fuzzer for the pe fabric: random source programs, compiled to dataflow graphs
shaped like compiled code, with a reference interpreter of their own (docs/fuzzing.md)."""
