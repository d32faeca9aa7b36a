package kv

import (
	"errors"
	"math/bits"
)

// LZF is the compression of RDB strings (RDB_ENC_LZF): a run of control
// bytes, each either a literal run (ctrl < 32: ctrl+1 bytes follow) or a
// back reference (the top 3 bits a length, 7 meaning a further byte adds
// to it, the low 5 bits and the next byte an offset back into what is
// already out).

var errLZF = errors.New("invalid LZF compressed string")

// lzfDecompress returns in decompressed, which must come to exactly n
// bytes. The stream is walked first to see that it does, so that n, the
// sender's claim, is allocated only once the stream bears it out.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	if size, ok := lzfDecode(in, nil); !ok || size != n {
		return nil, errLZF
	}
	out := make([]byte, n)
	lzfDecode(in, out)
	return out, nil
}

// lzfDecode returns how many bytes in decompresses to, and false if it is
// malformed; if out is not nil, it decompresses in into out, which must
// be that long.
func lzfDecode(in, out []byte) (size int, ok bool) {
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			lit := ctrl + 1
			if i+lit > len(in) {
				return 0, false
			}
			if out != nil {
				copy(out[size:], in[i:i+lit])
			}
			size += lit
			i += lit
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return 0, false
			}
			length += int(in[i])
			i++
		}
		length += 2
		if i >= len(in) {
			return 0, false
		}
		back := (ctrl&0x1f)<<8 | int(in[i]) + 1
		i++
		if back > size {
			return 0, false
		}
		if out != nil {
			// Byte by byte: a reference may overlap what it produces.
			for k := range length {
				out[size+k] = out[size-back+k]
			}
		}
		size += length
	}
	return size, true
}

const (
	lzfMaxHashBits = 14
	lzfMaxLit      = 32
	lzfMaxOff      = 1 << 13
	lzfMaxRef      = 7 + 255 + 2
)

// lzfCompress appends in compressed to dst if that takes at most limit
// bytes, and reports whether it did; dst is returned as it was if not.
// It is a greedy compressor: each position looks up the last place its
// next three bytes were seen, in a table sized to in.
func lzfCompress(dst, in []byte, limit int) ([]byte, bool) {
	start := len(dst)
	hashBits := min(max(bits.Len(uint(len(in))), 4), lzfMaxHashBits)
	table := make([]int32, 1<<hashBits) // position+1 of the last occurrence
	litAt := -1                         // where the open literal run's control byte is
	emit := func(b byte) {
		if litAt >= 0 && dst[litAt] < lzfMaxLit-1 {
			dst[litAt]++
		} else {
			litAt = len(dst)
			dst = append(dst, 0) // a run's control byte is its length - 1
		}
		dst = append(dst, b)
	}
	i := 0
	for i+2 < len(in) {
		if len(dst)-start > limit {
			return dst[:start], false
		}
		h := (uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])) * 2654435761 >> (32 - hashBits)
		ref := int(table[h]) - 1
		table[h] = int32(i + 1)
		if ref < 0 || i-ref > lzfMaxOff || in[ref] != in[i] || in[ref+1] != in[i+1] || in[ref+2] != in[i+2] {
			emit(in[i])
			i++
			continue
		}
		length := 3
		for length < lzfMaxRef && i+length < len(in) && in[ref+length] == in[i+length] {
			length++
		}
		off, l := i-ref-1, length-2
		if l < 7 {
			dst = append(dst, byte(l<<5|off>>8), byte(off))
		} else {
			dst = append(dst, byte(7<<5|off>>8), byte(l-7), byte(off))
		}
		litAt = -1
		i += length
	}
	for ; i < len(in); i++ {
		emit(in[i])
	}
	if len(dst)-start > limit {
		return dst[:start], false
	}
	return dst, true
}
