// Package llm is Sift's client of OpenAI-compatible chat completion APIs
// (OpenAI, Ollama, llama.cpp server, vLLM) over plain net/http.
package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sift-search/sift/internal/oai"
)

// Message is a chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Usage counts the tokens of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Client talks to one model of one server.
type Client struct {
	c     *oai.Client
	model string
}

// New returns a client of the chat API at base (normalised to end in /v1).
func New(base, key, model string) *Client {
	return &Client{c: oai.New(base, key), model: model}
}

// Transport exposes the HTTP transport, for tests to shorten its backoff.
func (c *Client) Transport() *oai.Client { return c.c }

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Temperature float64   `json:"temperature"`
	Stream      bool      `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// Complete returns the model's reply to messages (no streaming), and its
// token usage when the server reports it.
func (c *Client) Complete(ctx context.Context, msgs []Message, maxTokens int) (string, *Usage, error) {
	var res chatResponse
	err := c.c.PostJSON(ctx, "/chat/completions", chatRequest{Model: c.model, Messages: msgs, MaxTokens: maxTokens}, &res)
	if err != nil {
		return "", nil, fmt.Errorf("chat completion: %w", err)
	}
	if len(res.Choices) == 0 {
		return "", nil, errors.New("chat completion: the answer has no choices")
	}
	return res.Choices[0].Message.Content, res.Usage, nil
}

// hydePrompt asks for the passage a good answer would quote (HyDE).
const hydePrompt = "Write a short passage, two to four sentences, that answers the question the way " +
	"the project's documentation or an experienced community member would. Give concrete terms, " +
	"settings and error messages. Do not say that you are unsure."

// Hypothesize writes a short hypothetical answer to a search query, to be
// embedded with it (HyDE).
func (c *Client) Hypothesize(ctx context.Context, query string) (string, error) {
	answer, _, err := c.Complete(ctx, []Message{{"system", hydePrompt}, {"user", query}}, 160)
	return strings.TrimSpace(answer), err
}
