package kv

import "hash/crc64"

// crc64Jones is the table of the CRC-64 Redis checks its RDB files and
// DUMP payloads with: Jones's polynomial (0xad93d23594c935a9), reflected,
// starting from 0 with no final inversion, so that the check value of
// "123456789" is 0xe9c6d914c4b8d9ca. hash/crc64 computes reflected CRCs
// but inverts before and after; rdbCRC undoes both.
var crc64Jones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// rdbCRC returns the CRC of p continuing from crc, as Redis's crc64.
func rdbCRC(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, crc64Jones, p)
}
