package doclinks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCommitMsgHook runs .githooks/commit-msg with sh on messages at and
// past the 72-character limit, counted in characters, under the C locale
// (where a byte-counting tool would count é twice) and the caller's.
func TestCommitMsgHook(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the hook with")
	}
	hook := filepath.Join(moduleRoot(t), ".githooks", "commit-msg")
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") { // the hook must not find a repository
			env = append(env, kv)
		}
	}
	f := func(name, msg string, pass bool) {
		t.Helper()
		for _, locale := range []string{"", "LC_ALL=C"} {
			label := locale
			if label == "" {
				label = "caller's locale"
			}
			t.Run(name+"/"+label, func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, "COMMIT_EDITMSG")
				if err := os.WriteFile(file, []byte(msg), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(sh, hook, file)
				cmd.Dir = dir
				cmd.Env = env
				if locale != "" {
					cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], locale)
				}
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				switch {
				case pass && err != nil:
					t.Errorf("refused (%v): %s", err, out)
				case !pass && err == nil:
					t.Errorf("accepted %q", msg)
				case !pass && (!errors.As(err, &exit) || exit.ExitCode() != 1):
					t.Errorf("refused with %v, want exit status 1: %s", err, out)
				case !pass && !strings.HasPrefix(string(out), "commit-msg: "):
					t.Errorf("refusal does not say who refused: %s", out)
				}
			})
		}
	}
	ascii72 := "docs: " + strings.Repeat("x", 66)
	multi72 := "docs: " + strings.Repeat("é—", 33)
	if n := utf8.RuneCountInString(multi72); n != 72 || len(multi72) <= 72 {
		t.Fatalf("multi72 is %d characters, %d bytes", n, len(multi72))
	}
	f("72 characters", ascii72+"\n\nWhy, in a body longer than seventy-two characters, which is fine as it is.\n", true)
	f("73 characters", ascii72+"x\n", false)
	f("72 multi-byte characters", multi72+"\n", true)
	f("73 multi-byte characters", multi72+"😀\n", false)
	f("comments and blank lines first", "# Please enter the commit message "+strings.Repeat("#", 80)+"\n\n"+ascii72+"\n", true)
	f("trailing whitespace is not counted", ascii72+"   \t\r\n", true)
	f("empty", "\n# only a comment\n", false)
	f("fixup", "fixup! "+ascii72+"\n", true)
	f("squash", "squash! "+ascii72+"\n", true)
	f("merge", "Merge branch 'wt-docs' of /work/main into a branch whose name is long: "+ascii72+"\n", true)
	f("a subject under the scissors is not one", "\n# ------------------------ >8 ------------------------\n"+ascii72+"\n", false)
}
