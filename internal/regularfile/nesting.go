package regularfile

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxDepth is how deeply the files rackform parses may nest brackets,
// braces, parentheses, strings and template sequences within one another.
// HCL's and JSON's parsers recurse once or more per level, so a file of a
// few hundred KB nested 100,000 levels deep overflows the stack (a crash,
// not an error) and one nested tens of thousands of levels costs gigabytes
// of stack; no configuration, variables file, scenario or template comes
// near 100 levels.
const MaxDepth = 256

// Syntax is the grammar whose nesting CheckDepth measures.
type Syntax int

const (
	// HCL is HCL's native syntax (*.rf.hcl, variables files, scenarios).
	HCL Syntax = iota
	// JSON is JSON, as HCL's JSON syntax or a plan.
	JSON
	// Template is an HCL template (templatefile()).
	Template
)

// TooDeepError is a file nested deeper than the limit CheckDepth was
// given, at the place where it went beyond it.
type TooDeepError struct {
	Path         string
	Line, Column int
	Limit        int
}

func (e *TooDeepError) Error() string {
	return fmt.Sprintf("%s nests brackets, braces, parentheses or strings more than %d levels deep (at line %d, column %d); no real file comes near that, so rackform refuses it rather than parse it", e.Path, e.Limit, e.Line, e.Column)
}

// CheckDepth measures how deeply src, the file at path in syntax, nests,
// with one linear scan and at most limit levels of memory, and refuses it
// with a *TooDeepError beyond limit. HCL is measured on HCL's own lexer's
// tokens, so strings, heredocs and comments count exactly as the parser
// sees them; a closing token that does not match the innermost opening
// one is not counted, so a malformed file cannot hide its depth.
func CheckDepth(path string, src []byte, syntax Syntax, limit int) error {
	if syntax == JSON {
		return jsonDepth(path, src, limit)
	}
	var toks hclsyntax.Tokens
	if syntax == Template {
		toks, _ = hclsyntax.LexTemplate(src, path, hcl.InitialPos)
	} else {
		toks, _ = hclsyntax.LexConfig(src, path, hcl.InitialPos)
	}
	var open []hclsyntax.TokenType
	for i, t := range toks {
		if t.Type == hclsyntax.TokenTemplateControl {
			// %{ if } and %{ for } open a level that %{ endif } and
			// %{ endfor } close: the template parser recurses into them.
			switch directive(toks[i+1:]) {
			case "if", "for":
				open = append(open, tokenDirective)
			case "endif", "endfor":
				if len(open) > 0 && open[len(open)-1] == tokenDirective {
					open = open[:len(open)-1]
				}
			}
		}
		if closes, ok := closing[t.Type]; ok {
			if len(open) > 0 && (open[len(open)-1] == closes || (t.Type == hclsyntax.TokenTemplateSeqEnd && open[len(open)-1] == hclsyntax.TokenTemplateControl)) {
				open = open[:len(open)-1]
			}
			continue
		}
		if opens[t.Type] {
			open = append(open, t.Type)
		}
		if len(open) > limit {
			return &TooDeepError{Path: path, Line: t.Range.Start.Line, Column: t.Range.Start.Column, Limit: limit}
		}
	}
	return nil
}

// tokenDirective stands for an open %{ if } or %{ for } on the stack.
const tokenDirective hclsyntax.TokenType = -1

var opens = map[hclsyntax.TokenType]bool{
	hclsyntax.TokenOBrace: true, hclsyntax.TokenOBrack: true, hclsyntax.TokenOParen: true,
	hclsyntax.TokenOQuote: true, hclsyntax.TokenOHeredoc: true,
	hclsyntax.TokenTemplateInterp: true, hclsyntax.TokenTemplateControl: true,
}

// closing maps each closing token to the opening one it closes (the end
// of a template sequence closes ${ and %{ alike).
var closing = map[hclsyntax.TokenType]hclsyntax.TokenType{
	hclsyntax.TokenCBrace: hclsyntax.TokenOBrace, hclsyntax.TokenCBrack: hclsyntax.TokenOBrack, hclsyntax.TokenCParen: hclsyntax.TokenOParen,
	hclsyntax.TokenCQuote: hclsyntax.TokenOQuote, hclsyntax.TokenCHeredoc: hclsyntax.TokenOHeredoc,
	hclsyntax.TokenTemplateSeqEnd: hclsyntax.TokenTemplateInterp,
}

// directive is the keyword that starts a template directive's tokens.
func directive(toks hclsyntax.Tokens) string {
	for _, t := range toks {
		if t.Type == hclsyntax.TokenBitwiseNot {
			continue
		}
		if t.Type == hclsyntax.TokenIdent {
			return string(t.Bytes)
		}
		break
	}
	return ""
}

// jsonDepth is CheckDepth for JSON: strings are skipped, with their
// escapes.
func jsonDepth(path string, src []byte, limit int) error {
	var open []byte
	line, col := 1, 0
	inString, escaped := false, false
	for _, c := range src {
		col++
		switch {
		case c == '\n':
			line, col = line+1, 0
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			open = append(open, c)
			if len(open) > limit {
				return &TooDeepError{Path: path, Line: line, Column: col, Limit: limit}
			}
		case c == '}' || c == ']':
			if len(open) > 0 && open[len(open)-1] == c-2 {
				open = open[:len(open)-1]
			}
		}
	}
	return nil
}
