package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/viterin/vek/vek32"
)

// corpus: two topics whose texts share no words with each other, and
// within a topic, texts that share context words.
var corpus = func() []string {
	var out []string
	for i := 0; i < 40; i++ {
		out = append(out,
			fmt.Sprintf("the postgres database connection pool ran out of connections %d", i),
			fmt.Sprintf("raise max_open_conns or use pgbouncer for the database pool %d", i),
			fmt.Sprintf("the cron schedule fires twice after the daylight saving change %d", i),
			fmt.Sprintf("set tz on the schedule so daylight saving is handled %d", i),
		)
	}
	return out
}()

func each(texts []string) func(func(string)) {
	return func(fn func(string)) {
		for _, t := range texts {
			fn(t)
		}
	}
}

func embedOne(t testing.TB, m *Model, text string) []float32 {
	v, err := m.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestTrainedModelLearnsCooccurrence(t *testing.T) {
	m := Train(each(corpus))
	if m.Trained() != len(corpus) || m.Vocab() == 0 || !strings.HasPrefix(m.Name(), "builtin-ri1-") {
		t.Fatalf("trained %d texts, %d terms, name %q", m.Trained(), m.Vocab(), m.Name())
	}
	// "pgbouncer" and "connections" never occur in one text, but both occur
	// with "database" and "pool": a trained model relates them more than
	// "pgbouncer" and "daylight"; hashing cannot tell the pairs apart.
	sim := func(m *Model, a, b string) float32 { return vek32.Dot(embedOne(t, m, a), embedOne(t, m, b)) }
	if related, unrelated := sim(m, "pgbouncer", "connections"), sim(m, "pgbouncer", "daylight"); related < unrelated+0.05 {
		t.Errorf("trained: pgbouncer~connections %.3f, pgbouncer~daylight %.3f", related, unrelated)
	}
	u := Untrained()
	if related, unrelated := sim(u, "pgbouncer", "connections"), sim(u, "pgbouncer", "daylight"); related != 0 || unrelated != 0 {
		t.Errorf("hashing relates distinct words: %.3f %.3f", related, unrelated)
	}
	// A query finds its topic.
	q := embedOne(t, m, "too many database connections")
	if vek32.Dot(q, embedOne(t, m, corpus[1])) <= vek32.Dot(q, embedOne(t, m, corpus[3])) {
		t.Error("query about connections is closer to the daylight-saving text")
	}
	for _, v := range [][]float32{q, embedOne(t, m, "zzz unseen words only")} {
		if n := vek32.Norm(v); math.Abs(float64(n)-1) > 1e-4 {
			t.Errorf("norm %v", n)
		}
	}
	if v := embedOne(t, m, "the and of !!!"); vek32.Norm(v) != 0 {
		t.Error("a text of stop words gets a non-zero vector")
	}
}

func TestTrainingIsDeterministic(t *testing.T) {
	a, b := Train(each(corpus)), Train(each(corpus))
	if a.Name() != b.Name() || !slices.Equal(a.rows, b.rows) || !slices.Equal(a.pc, b.pc) {
		t.Fatal("equal corpora, different models")
	}
	if c := Train(each(corpus[:100])); c.Name() == a.Name() {
		t.Fatal("different corpora, same name")
	}
	if u := Train(each(nil)); u.Name() != Untrained().Name() {
		t.Fatal("training on nothing is not the untrained model")
	}
}

func encodeModel(t testing.TB, m *Model) [][]byte {
	var blocks [][]byte
	if err := m.Encode(func(b []byte) error { blocks = append(blocks, bytes.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func decodeModel(blocks [][]byte) (*Model, error) {
	i := 0
	return DecodeModel(func() ([]byte, error) {
		if i == len(blocks) {
			return nil, errors.New("no more blocks")
		}
		i++
		return blocks[i-1], nil
	})
}

func TestModelCodecRoundTrip(t *testing.T) {
	for _, m := range []*Model{Train(each(corpus)), Untrained()} {
		blocks := encodeModel(t, m)
		got, err := decodeModel(blocks)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name() != m.Name() || !slices.EqualFunc(encodeModel(t, got), blocks, bytes.Equal) {
			t.Fatal("round trip changed the model")
		}
		for _, text := range []string{corpus[0], "unseen words here", ""} {
			if !slices.Equal(embedOne(t, m, text), embedOne(t, got, text)) {
				t.Fatalf("decoded model embeds %q differently", text)
			}
		}
	}
}

func FuzzDecodeModel(f *testing.F) {
	blocks := encodeModel(f, Train(each(corpus[:20])))
	f.Add(blocks[0], bytes.Join(blocks[1:], nil))
	f.Fuzz(func(t *testing.T, hdr, body []byte) {
		m, err := decodeModel([][]byte{hdr, body})
		if err != nil {
			return
		}
		embedOne(t, m, "postgres pool daylight")
	})
}

// BenchmarkEmbed measures the built-in embedder on chat-window-sized texts
// (about 60 words), one core.
func BenchmarkEmbed(b *testing.B) {
	m := Train(each(corpus))
	text := strings.Repeat("the postgres pool ran out of connections after the daylight saving change, raise max_open_conns ", 4)
	dst := make([]float32, Dims)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.EmbedInto(dst, text)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

func TestBF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{0, 0}, {1, 0x3f80}, {-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
		{math.Float32frombits(0x3f807fff), 0x3f80}, // below the tie
	} {
		if got := toBF16(c.in); got != c.want {
			t.Errorf("toBF16(%v) = %#x, want %#x", c.in, got, c.want)
		}
		if w := fromBF16(c.want); toBF16(w) != c.want {
			t.Errorf("%#x does not round-trip", c.want)
		}
	}
	// Relative error at most 2^-8, and addBF16 adds the widened values.
	rng := rand.New(rand.NewPCG(1, 2))
	row := make([]uint16, Dims+3)
	want := make([]float32, len(row))
	got := make([]float32, len(row))
	for i := range row {
		x := float32(rng.NormFloat64())
		row[i] = toBF16(x)
		if d := math.Abs(float64(fromBF16(row[i])-x)) / math.Abs(float64(x)); d > 1.0/256 {
			t.Fatalf("%v rounds to %v", x, fromBF16(row[i]))
		}
		want[i] = 1 + fromBF16(row[i])
		got[i] = 1
	}
	addBF16(got, row)
	if !slices.Equal(got, want) {
		t.Fatal("addBF16 differs from adding the widened values")
	}
	// Every length, against the reference.
	for n := range 40 {
		a, b := slices.Clone(want[:n]), slices.Clone(want[:n])
		addBF16(a, row[:n])
		addBF16Ref(b, row[:n])
		if !slices.Equal(a, b) {
			t.Fatalf("length %d: %v, want %v", n, a, b)
		}
	}
}

func FuzzAddBF16(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18})
	f.Fuzz(func(t *testing.T, b []byte) {
		row := make([]uint16, len(b)/2)
		for i := range row {
			row[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		a := make([]float32, len(row))
		for i := range a {
			a[i] = float32(i) - 3.5
		}
		c := slices.Clone(a)
		addBF16(a, row)
		addBF16Ref(c, row)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(c[i]) && !(a[i] != a[i] && c[i] != c[i]) {
				t.Fatalf("%d: %v, want %v", i, a[i], c[i])
			}
		}
	})
}
