package chunk

import (
	"fmt"
	"testing"

	"github.com/sift-search/sift/follow"
)

// TestWindowKeepsReplies: a silence longer than WindowGap starts a new
// window, unless the message replies to one of the window — a question
// answered an hour later stays with its answer.
func TestWindowKeepsReplies(t *testing.T) {
	at := func(min int, id, replyTo string) follow.MessageText {
		return follow.MessageText{Live: true, Micros: int64(min) * 60e6, Content: "x", ID: id, ReplyTo: replyTo}
	}
	texts := []follow.MessageText{
		at(0, "q", ""), at(1, "a", ""),
		at(60, "r", "q"),   // replies to the window's question after an hour
		at(200, "s", "zz"), // replies to a message of no window here
		at(400, "t", "q"),  // replies to a message of an earlier window
		at(401, "u", "t"),
	}
	if got := fmt.Sprint(Windows([]int{0, 1, 2, 3, 4, 5}, texts)); got != "[[0 1 2] [3] [4 5]]" {
		t.Errorf("windows %s", got)
	}
}
