package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// completion is drip completion bash|zsh|fish: a script that completes
// drip's commands, subcommands and flags, made from the same table and
// flags as the help, so neither can miss a command.
func completion(ctx context.Context, args []string, stdout io.Writer) error {
	shells := map[string]func(io.Writer, []completionNode){"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}
	if len(args) == 1 && !isHelp(args[0]) {
		write, ok := shells[args[0]]
		if !ok {
			return usagef("name a shell: drip completion bash, zsh or fish")
		}
		write(stdout, completionTree())
		return nil
	}
	fs := flag.NewFlagSet("drip completion", flag.ContinueOnError)
	if err := parseFlags(ctx, fs, args, stdout, noConfig); err != nil {
		return err
	}
	return usagef("name a shell: drip completion bash, zsh or fish")
}

// completionNode is what is offered after a command path ("admin
// faucet"): its subcommands, or its flags.
type completionNode struct {
	path   string
	words  []completionWord // subcommands, or a command's arguments
	flags  []completionWord // "--listen"
	values []string         // flags that take a value
}

type completionWord struct{ word, about string }

// completionTree is every command path of drip, with what follows it.
func completionTree() []completionNode {
	var nodes []completionNode
	top := completionNode{flags: []completionWord{{"--help", "print the usage"}, {"--version", "print the version"}}}
	for _, c := range topCommands {
		top.words = append(top.words, completionWord{c.name, c.summary})
	}
	nodes = append(nodes, top)

	// The admin groups: each word of an admin command's name below them.
	groups := map[string][]completionWord{}
	seen := map[string]bool{}
	for _, c := range leafCommands() {
		parts := strings.Fields(c.name)
		for i := 1; i < len(parts); i++ {
			parent, word := strings.Join(parts[:i], " "), parts[i]
			if seen[parent+" "+word] {
				continue
			}
			seen[parent+" "+word] = true
			about := c.summary
			if i < len(parts)-1 {
				about = "commands of " + strings.Join(parts[1:i+1], " ")
			}
			groups[parent] = append(groups[parent], completionWord{word, about})
		}
	}
	for _, parent := range slices.Sorted(maps.Keys(groups)) {
		nodes = append(nodes, completionNode{path: parent, words: groups[parent], flags: []completionWord{{"--help", "print the usage"}}})
	}

	for _, c := range leafCommands() {
		n := completionNode{path: c.name}
		switch c.name {
		case "completion":
			n.words = []completionWord{{"bash", "the bash script"}, {"zsh", "the zsh script"}, {"fish", "the fish script"}}
		case "help":
			n.words = top.words
		}
		if fs := flagsOf(strings.Fields(c.name)...); fs != nil {
			fs.VisitAll(func(f *flag.Flag) {
				if hidden(f) {
					return
				}
				n.flags = append(n.flags, completionWord{"--" + f.Name, f.Usage})
				if !isBool(f) {
					n.values = append(n.values, "--"+f.Name)
				}
			})
		}
		n.flags = append(n.flags, completionWord{"--help", "print the usage"})
		nodes = append(nodes, n)
	}
	return nodes
}

// about shortens a summary or a flag's usage to a completion menu's line.
func about(s string) string {
	for _, sep := range []string{"; ", " ("} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 70 {
		s = string(r[:69]) + "…"
	}
	return s
}

func words(ws []completionWord) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.word
	}
	return strings.Join(out, " ")
}

func bashCompletion(w io.Writer, nodes []completionNode) {
	fmt.Fprint(w, `# bash completion for drip, written by "drip completion bash".
# Load it with: source <(drip completion bash)
_drip() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path= i
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -* ]] && break
        path+=${path:+ }${COMP_WORDS[i]}
    done
    local commands= flags= values=
    case $path in
`)
	for _, n := range nodes {
		fmt.Fprintf(w, "    '%s') commands='%s' flags='%s' values='%s' ;;\n", n.path, words(n.words), words(n.flags), strings.Join(n.values, " "))
	}
	fmt.Fprint(w, `    *) return 0 ;;
    esac
    if [[ $cur != -* && " $values " == *" $prev "* ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    elif [[ $cur == -* || -z $commands ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
}
complete -F _drip drip
`)
}

// zshQuote quotes s for zsh in single quotes.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func zshCompletion(w io.Writer, nodes []completionNode) {
	fmt.Fprint(w, `#compdef drip
# zsh completion for drip, written by "drip completion zsh".
# Load it with: source <(drip completion zsh), or save it as _drip in a directory of $fpath.
_drip() {
    local path_= i
    for ((i = 2; i < CURRENT; i++)); do
        [[ ${words[i]} == -* ]] && break
        path_+=${path_:+ }${words[i]}
    done
    local -a commands flags values
    case $path_ in
`)
	entries := func(ws []completionWord) string {
		out := make([]string, len(ws))
		for i, x := range ws {
			out[i] = zshQuote(x.word + ":" + about(x.about))
		}
		return strings.Join(out, " ")
	}
	for _, n := range nodes {
		fmt.Fprintf(w, "    %s) commands=(%s) flags=(%s) values=(%s) ;;\n", zshQuote(n.path), entries(n.words), entries(n.flags), strings.Join(n.values, " "))
	}
	fmt.Fprint(w, `    *) return 1 ;;
    esac
    if [[ ${words[CURRENT]} != -* ]] && (( ${values[(Ie)${words[CURRENT-1]}]} )); then
        _files
    elif [[ ${words[CURRENT]} == -* || ${#commands} -eq 0 ]]; then
        _describe -t flags 'flag' flags
    else
        _describe -t commands 'command' commands
    fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _drip "$@"
else
    compdef _drip drip
fi
`)
}

// fishQuote quotes s for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func fishCompletion(w io.Writer, nodes []completionNode) {
	fmt.Fprint(w, `# fish completion for drip, written by "drip completion fish".
# Load it with: drip completion fish | source, or save it as ~/.config/fish/completions/drip.fish
function __drip_at --description 'is the command line at this drip command path'
    set -l toks (commandline -opc)
    set -e toks[1]
    set -l path
    for t in $toks
        string match -q -- '-*' $t; and break
        set -a path $t
    end
    test "$path" = "$argv[1]"
end
complete -c drip -f
`)
	for _, n := range nodes {
		cond := fishQuote("__drip_at " + fishQuote(n.path))
		for _, x := range n.words {
			fmt.Fprintf(w, "complete -c drip -n %s -a %s -d %s\n", cond, fishQuote(x.word), fishQuote(about(x.about)))
		}
		for _, x := range n.flags {
			value := ""
			if slices.Contains(n.values, x.word) {
				value = " -r -F"
			}
			fmt.Fprintf(w, "complete -c drip -n %s -l %s%s -d %s\n", cond, fishQuote(strings.TrimPrefix(x.word, "--")), value, fishQuote(about(x.about)))
		}
	}
}
