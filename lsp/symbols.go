package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/textkernel"
)

// documentSymbol answers textDocument/documentSymbol with an outline of the
// agent: persona, each judgment by domain with its rule lists and examples,
// responsibilities, mission, background sections with their keys and
// awareness domains. A file that does not parse has an empty outline. The
// outline is a function of the parse alone: it is built and encoded once
// per parsed document (symbolCache) and written as is (encodedResult).
func (s *server) documentSymbol(ctx context.Context, p *protocol.DocumentSymbolParams) (encodedResult, error) {
	releaseQueue(ctx)
	if _, err := s.confinedPath(p.TextDocument.URI); err != nil {
		return nil, err
	}
	f, err := s.loadAgentFile(p.TextDocument.URI)
	if err != nil || isWorkspaceConfig(f.path) {
		return encodedResult("[]"), nil
	}
	if out, ok := s.symbols.get(f.uri, f.doc); ok {
		return out, nil
	}
	data, err := json.Marshal(agentSymbols(f.doc))
	if err != nil {
		return nil, fmt.Errorf("encode outline of %s: %w", f.path, err)
	}
	s.symbols.put(f.uri, f.doc, data)
	return data, nil
}

// symbolCache keeps the encoded outline of each file's last parse. The zero
// value is ready to use.
type symbolCache struct {
	mu sync.Mutex
	m  map[protocol.DocumentURI]cachedSymbols
}

type cachedSymbols struct {
	doc *schema.Document
	out encodedResult
}

func (c *symbolCache) get(uri protocol.DocumentURI, doc *schema.Document) (encodedResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[uri]
	if !ok || e.doc != doc {
		return nil, false
	}
	return e.out, true
}

func (c *symbolCache) put(uri protocol.DocumentURI, doc *schema.Document, out encodedResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedViews {
		c.m = map[protocol.DocumentURI]cachedSymbols{}
	}
	c.m[uri] = cachedSymbols{doc: doc, out: out}
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
		add(&rt.Children, symbolAt(d, "/roleTemplate/persona", "persona", textkernel.Clip(stringAt(d, "/roleTemplate/persona/identity"), 60), protocol.SymbolKindInterface))
		if js := symbolAt(d, "/roleTemplate/judgments", "judgments", "", protocol.SymbolKindArray); js != nil {
			for _, jp := range d.Children("/roleTemplate/judgments") {
				name := stringAt(d, jp+"/domain")
				if name == "" {
					name = "(no domain)"
				}
				j := selectBy(d, symbolAt(d, jp, name, "", protocol.SymbolKindNamespace), jp+"/domain")
				if j == nil {
					continue
				}
				for _, list := range []string{"heuristics", "constraints", "escalationTriggers"} {
					add(&j.Children, listSymbol(d, jp+"/"+list, list))
				}
				if ex := listSymbol(d, jp+"/examples", "examples"); ex != nil {
					for _, ep := range d.Children(jp + "/examples") {
						add(&ex.Children, selectBy(d, symbolAt(d, ep, orDash(textkernel.Clip(stringAt(d, ep+"/scenario"), 60)), "", protocol.SymbolKindEvent), ep+"/scenario"))
					}
					j.Children = append(j.Children, *ex)
				}
				js.Children = append(js.Children, *j)
			}
			rt.Children = append(rt.Children, *js)
		}
		if rs := listSymbol(d, "/roleTemplate/responsibilities", "responsibilities"); rs != nil {
			for _, rp := range d.Children("/roleTemplate/responsibilities") {
				add(&rs.Children, selectBy(d, symbolAt(d, rp, orDash(stringAt(d, rp+"/key")), stringAt(d, rp+"/name"), protocol.SymbolKindMethod), rp+"/key"))
			}
			rt.Children = append(rt.Children, *rs)
		}
		for _, k := range []string{"tone", "methodology", "recovery"} {
			add(&rt.Children, symbolAt(d, "/roleTemplate/"+k, k, stringAt(d, "/roleTemplate/"+k+"/name"), protocol.SymbolKindObject))
		}
		out = append(out, *rt)
	}
	add(&out, symbolAt(d, "/mission", "mission", textkernel.Clip(stringAt(d, "/mission/objective"), 60), protocol.SymbolKindModule))
	if bg := symbolAt(d, "/background", "background", "", protocol.SymbolKindModule); bg != nil {
		for _, sp := range d.Children("/background") {
			sec := symbolAt(d, sp, lastToken(sp), "", protocol.SymbolKindStruct)
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
				add(&ds.Children, selectBy(d, symbolAt(d, dp, orDash(stringAt(d, dp+"/name")), textkernel.Clip(stringAt(d, dp+"/description"), 60), protocol.SymbolKindProperty), dp+"/name"))
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

// selectBy makes the value of the field at ptr (a judgment's domain, a
// responsibility's key) the selection range of a list item's symbol, whose
// own "key" is only its dash: what breadcrumbs and reveal highlight.
func selectBy(d *schema.Document, sym *protocol.DocumentSymbol, ptr string) *protocol.DocumentSymbol {
	if sym == nil {
		return nil
	}
	if r, ok := d.ValueRange(ptr); ok {
		sel := toRange(r)
		if !posBefore(sel.Start, sym.Range.Start) && !posBefore(sym.Range.End, sel.End) {
			sym.SelectionRange = sel
		}
	}
	return sym
}

func posBefore(a, b protocol.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
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

// parsedDocument is the parse of text, the path's content: the server's
// parse of the open document when it is of this very text, else a new one
// (nil when text does not parse).
func (s *server) parsedDocument(uri protocol.DocumentURI, path string, text []byte) *schema.Document {
	if d, a := s.latest(uri); d != nil && a != nil && a.doc != nil && a.version == d.version && bytes.Equal(d.text, text) {
		return a.doc
	}
	doc, _ := schema.ParseDocument(path, text, schema.BOMIsText)
	return doc
}
