package events_test

import (
	"fmt"
	"time"

	"github.com/evloop/evloop/events"
)

// The owner watches and pulls; any goroutine may Emit.
func Example() {
	l, err := events.New[string]()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	l.WatchTimer("tick", 5*time.Millisecond, 5*time.Millisecond)
	l.Emit("hello")
	ticks := 0
	for key := range l.Events() {
		fmt.Println(key)
		if key == "tick" {
			ticks++
			if ticks == 2 {
				break
			}
		}
	}
	// Output:
	// hello
	// tick
	// tick
}
