package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

// DocumentSymbol answers textDocument/documentSymbol with an outline of the
// agent: persona, each judgment by domain with its rule lists and examples,
// responsibilities, mission, background sections with their keys and
// awareness domains. A file that does not parse has an empty outline.
func (s *server) DocumentSymbol(ctx context.Context, p *protocol.DocumentSymbolParams) ([]interface{}, error) {
	f, err := s.loadAgentFile(p.TextDocument.URI)
	if err != nil {
		return []interface{}{}, nil
	}
	syms := agentSymbols(f.doc)
	out := make([]interface{}, len(syms))
	for i := range syms {
		out[i] = syms[i]
	}
	return out, nil
}

// agentSymbols builds the outline of an agent document from its tree, so it
// works on files with schema errors too.
func agentSymbols(d *schema.Document) []protocol.DocumentSymbol {
	out := []protocol.DocumentSymbol{}
	add := func(list *[]protocol.DocumentSymbol, sym *protocol.DocumentSymbol) {
		if sym != nil {
			*list = append(*list, *sym)
		}
	}
	if rt := symbolAt(d, "/roleTemplate", "roleTemplate", stringAt(d, "/roleTemplate/name"), protocol.SymbolKindClass); rt != nil {
		add(&rt.Children, symbolAt(d, "/roleTemplate/persona", "persona", truncate(stringAt(d, "/roleTemplate/persona/identity"), 60), protocol.SymbolKindInterface))
		if js := symbolAt(d, "/roleTemplate/judgments", "judgments", "", protocol.SymbolKindArray); js != nil {
			for _, jp := range d.Children("/roleTemplate/judgments") {
				name := stringAt(d, jp+"/domain")
				if name == "" {
					name = "(no domain)"
				}
				j := symbolAt(d, jp, name, "judgment", protocol.SymbolKindNamespace)
				if j == nil {
					continue
				}
				for _, list := range []string{"heuristics", "constraints", "escalationTriggers"} {
					add(&j.Children, listSymbol(d, jp+"/"+list, list))
				}
				if ex := listSymbol(d, jp+"/examples", "examples"); ex != nil {
					for _, ep := range d.Children(jp + "/examples") {
						add(&ex.Children, symbolAt(d, ep, orDash(truncate(stringAt(d, ep+"/scenario"), 60)), "example", protocol.SymbolKindEvent))
					}
					j.Children = append(j.Children, *ex)
				}
				js.Children = append(js.Children, *j)
			}
			rt.Children = append(rt.Children, *js)
		}
		if rs := listSymbol(d, "/roleTemplate/responsibilities", "responsibilities"); rs != nil {
			for _, rp := range d.Children("/roleTemplate/responsibilities") {
				add(&rs.Children, symbolAt(d, rp, orDash(stringAt(d, rp+"/key")), stringAt(d, rp+"/name"), protocol.SymbolKindMethod))
			}
			rt.Children = append(rt.Children, *rs)
		}
		for _, k := range []string{"tone", "methodology", "recovery"} {
			add(&rt.Children, symbolAt(d, "/roleTemplate/"+k, k, stringAt(d, "/roleTemplate/"+k+"/name"), protocol.SymbolKindObject))
		}
		out = append(out, *rt)
	}
	add(&out, symbolAt(d, "/mission", "mission", truncate(stringAt(d, "/mission/objective"), 60), protocol.SymbolKindModule))
	if bg := symbolAt(d, "/background", "background", "", protocol.SymbolKindModule); bg != nil {
		for _, sp := range d.Children("/background") {
			sec := symbolAt(d, sp, lastToken(sp), "section", protocol.SymbolKindStruct)
			if sec == nil {
				continue
			}
			for _, kp := range d.Children(sp) {
				add(&sec.Children, symbolAt(d, kp, lastToken(kp), "", protocol.SymbolKindField))
			}
			bg.Children = append(bg.Children, *sec)
		}
		out = append(out, *bg)
	}
	if aw := symbolAt(d, "/awareness", "awareness", "", protocol.SymbolKindModule); aw != nil {
		if ds := listSymbol(d, "/awareness/domains", "domains"); ds != nil {
			for _, dp := range d.Children("/awareness/domains") {
				add(&ds.Children, symbolAt(d, dp, orDash(stringAt(d, dp+"/name")), truncate(stringAt(d, dp+"/description"), 60), protocol.SymbolKindProperty))
			}
			aw.Children = append(aw.Children, *ds)
		}
		out = append(out, *aw)
	}
	return out
}

// listSymbol is an array's symbol detailed with its item count.
func listSymbol(d *schema.Document, ptr, name string) *protocol.DocumentSymbol {
	n := len(d.Children(ptr))
	return symbolAt(d, ptr, name, fmt.Sprintf("%d item%s", n, plural(n)), protocol.SymbolKindArray)
}

// symbolAt is the symbol of the node at ptr (nil when absent): its range
// spans key and value, its selection range is the key.
func symbolAt(d *schema.Document, ptr, name, detail string, kind protocol.SymbolKind) *protocol.DocumentSymbol {
	key, ok := d.KeyRange(ptr)
	if !ok {
		return nil
	}
	val, _ := d.ValueRange(ptr)
	full := key
	if val.End.Offset > full.End.Offset {
		full.End = val.End
	}
	if val.Start.Offset < full.Start.Offset {
		full.Start = val.Start
	}
	if name == "" {
		name = "-"
	}
	return &protocol.DocumentSymbol{Name: name, Detail: detail, Kind: kind, Range: toRange(full), SelectionRange: toRange(key)}
}

// stringAt is the string value at ptr, "" when absent or not a string.
func stringAt(d *schema.Document, ptr string) string {
	v, _ := d.ValueAt(ptr)
	s, _ := v.(string)
	return s
}

// lastToken is ptr's last token, unescaped.
func lastToken(ptr string) string {
	toks := schema.SplitPointer(ptr)
	if len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}
