// Command sift serves search and question answering over a community's chat
// messages and documents, from one binary with no external database.
//
//	sift serve [flags]                         run the service
//	sift backup --data-dir DIR --out FILE      write a snapshot of DIR (offline), or of the cluster with STORE=weaviate
//	sift restore --data-dir DIR FILE           install a backup into an empty DIR (a cluster: restore, then migrate)
//	sift verify FILE | --data-dir DIR          check a snapshot, backup, log segment or data dir; exit 0/1/2 by severity
//	sift import --data-dir DIR --source ID FILE  import a chat export (offline)
//	sift migrate --data-dir DIR --to weaviate --weaviate-url URL  copy DIR into a cluster (offline, resumable)
//	sift mcp --url URL [--key KEY]             MCP tools over stdio, through a server
//	sift version                               print the version
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: sift <command> [flags]

commands:
  serve     run the service (sift serve -h lists every setting)
  backup    write a snapshot of an offline data dir: sift backup --data-dir DIR --out FILE
            (STORE=weaviate: of the cluster WEAVIATE_URL and WEAVIATE_NAMESPACE name, while it serves)
  restore   install a backup into an empty data dir: sift restore --data-dir DIR FILE
            (refused with STORE=weaviate: restore into a data dir, then sift migrate it into the cluster)
  verify    check a snapshot, backup or log segment, or a whole data dir, and print
            what it holds and what start-up would do (exit 0 sound, 1 recoverable
            damage, 2 lost writes): sift verify FILE | sift verify --data-dir DIR
  import    import a chat export into an offline data dir:
            sift import --data-dir DIR --source ID [--name NAME] FILE
            (DiscordChatExporter JSON, Slack export zip, Telegram result.json)
  migrate   copy an offline data dir into a Weaviate cluster, for STORE=weaviate
            (resumable: run it again after an interruption):
            sift migrate --data-dir DIR --to weaviate --weaviate-url URL [--weaviate-namespace NS]
            [--weaviate-replication N] [--weaviate-shards N] [--weaviate-api-key K]
            (env WEAVIATE_URL, WEAVIATE_NAMESPACE, WEAVIATE_REPLICATION, WEAVIATE_SHARDS, WEAVIATE_API_KEY)
  mcp       serve the MCP tools over stdio for a desktop agent, through a server:
            sift mcp --url URL [--key KEY]  (env SIFT_URL, SIFT_API_KEY)
  version   print the version
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "serve":
		err = serve(args)
	case "backup":
		err = backup(args)
	case "restore":
		err = restore(args)
	case "verify":
		err = verify(args)
	case "import":
		err = importCmd(args)
	case "migrate":
		err = migrateCmd(args)
	case "mcp":
		err = mcpCmd(args)
	case "version", "-version", "--version":
		fmt.Println("sift", version)
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "sift: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	var status exitStatus
	if errors.As(err, &status) {
		os.Exit(int(status))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sift:", err)
		os.Exit(1)
	}
}
