//! `tuplecorr compare BEFORE AFTER`: pairs requests of two runs by service and
//! states how the source address and reply path changed.
