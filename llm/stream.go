package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"time"

	"github.com/sift-search/sift/internal/oai"
)

// StreamIdle bounds the silence between two pieces of a streamed answer.
var StreamIdle = 60 * time.Second

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type streamRequest struct {
	chatRequest
	StreamOptions streamOptions `json:"stream_options"`
}

type streamChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// ErrIncomplete is a streamed answer that ended before the server said it
// was finished.
var ErrIncomplete = errors.New("the model server's answer ended early")

// Stream sends msgs and calls onToken with each piece of the reply as it
// arrives; it returns the token usage the server reported, or nil when it
// reported none. The request is retried (429, 5xx, network errors) only
// before the answer starts. The answer fails on an error event in the
// stream, a silence longer than StreamIdle, a broken or early-ended
// stream, or an error from onToken — which also closes the connection, so
// the server stops generating. A server that ignores "stream" and answers
// one JSON body is accepted: its reply is one piece.
func (c *Client) Stream(ctx context.Context, msgs []Message, maxTokens int, onToken func(string) error) (*Usage, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req := streamRequest{
		chatRequest:   chatRequest{Model: c.model, Messages: msgs, MaxTokens: maxTokens, Temperature: 0.2, Stream: true},
		StreamOptions: streamOptions{IncludeUsage: true},
	}
	res, err := c.c.DoStream(ctx, "/chat/completions", req)
	if err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	defer res.Body.Close()

	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		var whole chatResponse
		if err := json.NewDecoder(io.LimitReader(res.Body, c.c.MaxBody)).Decode(&whole); err != nil {
			return nil, fmt.Errorf("chat completion: decode answer: %w", err)
		}
		if len(whole.Choices) == 0 {
			return nil, errors.New("chat completion: the answer has no choices")
		}
		if t := whole.Choices[0].Message.Content; t != "" {
			if err := onToken(t); err != nil {
				return nil, err
			}
		}
		return whole.Usage, nil
	}

	errIdle := fmt.Errorf("chat completion: no answer from the model server for %v", StreamIdle)
	idle := time.AfterFunc(StreamIdle, func() { cancel(errIdle) })
	defer idle.Stop()
	var usage *Usage
	finished := false
	done, err := ReadSSE(io.LimitReader(res.Body, c.c.MaxBody), func(data []byte) error {
		idle.Reset(StreamIdle)
		var chunk streamChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return fmt.Errorf("chat completion: decode stream event: %w", err)
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			return fmt.Errorf("chat completion: %w", &oai.APIError{Status: 502, Message: oai.ErrorMessage(data, c.c.Key)})
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != nil {
				finished = true
			}
			if ch.Delta.Content != "" {
				if err := onToken(ch.Delta.Content); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil && errors.Is(context.Cause(ctx), errIdle) {
		return nil, errIdle
	}
	if err != nil {
		return nil, err
	}
	if !done && !finished {
		return nil, fmt.Errorf("chat completion: %w", ErrIncomplete)
	}
	// Read what is left (a last newline, a usage chunk after [DONE]) so the
	// connection goes back to the pool instead of being closed.
	io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	return usage, nil
}
