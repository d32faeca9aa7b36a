package resp_test

import (
	"errors"
	"fmt"

	"github.com/evloop/evloop/resp"
)

func ExampleParser_Command() {
	in := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nGET k\r\n\r\necho \"a b\"\r\n*1\r\n$4\r\nPI")
	var p resp.Parser
	for {
		args, n, err := p.Command(in)
		if errors.Is(err, resp.ErrIncomplete) {
			fmt.Printf("wait for more after %q\n", in)
			break
		}
		if err != nil {
			fmt.Println("-ERR " + err.Error())
			break
		}
		in = in[n:]
		if len(args) == 0 {
			continue // an empty line
		}
		fmt.Printf("%q\n", args)
	}
	// Output:
	// ["SET" "k" "hello"]
	// ["GET" "k"]
	// ["echo" "a b"]
	// wait for more after "*1\r\n$4\r\nPI"
}

func ExampleParser_Command_error() {
	var p resp.Parser
	_, _, err := p.Command([]byte("*1\r\n+PING\r\n"))
	var pe *resp.ProtocolError
	if errors.As(err, &pe) {
		fmt.Printf("-ERR %s\n", err)
	}
	// Output:
	// -ERR Protocol error: expected '$', got '+'
}

func ExampleWriter() {
	for _, proto := range []int{2, 3} {
		w := resp.Writer{Proto: proto}
		w.Map(2)
		w.BulkString("score")
		w.Double(1.5)
		w.BulkString("found")
		w.Bool(true)
		w.Null()
		fmt.Printf("RESP%d: %q\n", proto, w.Buf)
	}
	// Output:
	// RESP2: "*4\r\n$5\r\nscore\r\n$3\r\n1.5\r\n$5\r\nfound\r\n:1\r\n$-1\r\n"
	// RESP3: "%2\r\n$5\r\nscore\r\n,1.5\r\n$5\r\nfound\r\n#t\r\n_\r\n"
}

func ExampleParse() {
	in := []byte("*2\r\n$5\r\nhello\r\n%1\r\n+ttl\r\n:60\r\n")
	v, n, err := resp.Parse(in)
	if err != nil {
		panic(err)
	}
	fmt.Println(n, v.Type, len(v.Elems))
	fmt.Printf("%s %q\n", v.Elems[0].Type, v.Elems[0].Str)
	m := v.Elems[1]
	fmt.Printf("%s %q=%d\n", m.Type, m.Elems[0].Str, m.Elems[1].Int)
	// Output:
	// 30 Array 2
	// BulkString "hello"
	// Map "ttl"=60
}

func ExampleAppendCommand() {
	req := resp.AppendCommand(nil, []byte("SET"), []byte("greeting"), []byte("hi there"))
	fmt.Printf("%q\n", req)
	// Output:
	// "*3\r\n$3\r\nSET\r\n$8\r\ngreeting\r\n$8\r\nhi there\r\n"
}
