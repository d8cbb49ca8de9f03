//! The report's HTML: the kernel doc sections as HTML, the cards, the page. Everything is
//! inline (one `<style>`, no script, no font or stylesheet from the network); the pictures
//! are `<img>`s of the SVG files next to `index.html`, so the page works opened from disk.

/// Escapes text for HTML.
pub use reduce_scan::trace::escape;

/// One line of rustdoc Markdown as HTML: `code`, **bold**, *emphasis*, and intra-doc links
/// (`` [`x`] `` and `` [`x`](path) ``) reduced to their text.
pub fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    let mut code = false;
    let mut strong = false;
    let mut em = false;
    while let Some(c) = rest.chars().next() {
        let len = c.len_utf8();
        if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
        } else if code {
            out.push_str(&escape(&rest[..len]));
        } else if rest.starts_with("**") {
            out.push_str(if strong { "</strong>" } else { "<strong>" });
            strong = !strong;
            rest = &rest[2..];
            continue;
        } else if c == '*' && (em || emphasis_opens(&out, &rest[1..])) {
            out.push_str(if em { "</em>" } else { "<em>" });
            em = !em;
        } else if c == '[' || c == ']' {
            // [`x`](path): drop the brackets and the link target.
            if c == ']'
                && rest[1..].starts_with('(')
                && let Some(end) = rest.find(')')
            {
                rest = &rest[end + 1..];
                continue;
            }
        } else {
            out.push_str(&escape(&rest[..len]));
        }
        rest = &rest[len..];
    }
    if code {
        out.push_str("</code>");
    }
    if strong {
        out.push_str("</strong>");
    }
    if em {
        out.push_str("</em>");
    }
    out
}

/// Does a `*` open emphasis: after a space (or at the start) and before a letter?
fn emphasis_opens(before: &str, after: &str) -> bool {
    let prev_ok = before.chars().next_back().is_none_or(|c| c.is_whitespace() || c == '(' || c == '>');
    prev_ok && after.chars().next().is_some_and(char::is_alphabetic)
}

/// The text of section `# heading` of the first kernel doc comment in `src` that has it,
/// as HTML paragraphs (blank lines split paragraphs; ```text blocks become `<pre>`).
pub fn doc_section(src: &str, heading: &str) -> Option<String> {
    let docs: Vec<&str> = src.lines().map(str::trim_start).map(|l| l.strip_prefix("///").unwrap_or("\u{0}")).collect();
    let start = docs.iter().position(|l| l.trim() == format!("# {heading}"))?;
    let mut html = String::new();
    let mut para: Vec<String> = Vec::new();
    let mut pre: Option<String> = None;
    let flush = |para: &mut Vec<String>, html: &mut String| {
        if !para.is_empty() {
            html.push_str(&format!("<p>{}</p>", inline(&para.join(" "))));
            para.clear();
        }
    };
    for line in &docs[start + 1..] {
        if *line == "\u{0}" || line.trim_start().starts_with("# ") {
            break;
        }
        let line = line.strip_prefix(' ').unwrap_or(line);
        if line.trim_start().starts_with("```") {
            match pre.take() {
                Some(p) => html.push_str(&format!("<pre>{}</pre>", escape(&p))),
                None => {
                    flush(&mut para, &mut html);
                    pre = Some(String::new());
                }
            }
        } else if let Some(p) = pre.as_mut() {
            p.push_str(line);
            p.push('\n');
        } else if line.trim().is_empty() {
            flush(&mut para, &mut html);
        } else {
            para.push(line.trim().to_string());
        }
    }
    flush(&mut para, &mut html);
    Some(html)
}

/// The page around the sections.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n{body}</body>\n</html>\n",
        t = escape(title)
    )
}

const STYLE: &str = "body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; }
h2 { border-bottom: 2px solid #ccc; margin-top: 2em; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 1em; }
.card { border: 1px solid #ccc; border-radius: 6px; padding: 0.6em 1em; background: #fafafa; }
.card h3 { margin: 0.2em 0; font-family: monospace; font-size: 1.15em; }
.card .family { color: #777; font-size: 0.85em; }
.card h4 { margin: 0.6em 0 0.2em; font-size: 0.95em; color: #444; }
.card p { margin: 0.3em 0; font-size: 0.9em; line-height: 1.35; }
pre { font-size: 0.75em; background: #f0f0f0; padding: 0.4em; overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #eee; }
td.l, th.l { text-align: left; }
tr.hi td { background: #ffe9a8; font-weight: bold; }
.fail { color: #b00; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
table.phrasebook td, table.phrasebook th { text-align: left; vertical-align: top; }
table.ncu { font-size: 0.75em; width: 100%; }
.card { min-width: 0; overflow-x: auto; }
.note { color: #555; font-size: 0.9em; }
.trace { max-height: 420px; overflow: auto; border: 1px solid #eee; background: white; }
.trace img { max-width: none; width: 100%; border: none; }
table.code { font-size: 0.72em; width: 100%; table-layout: fixed; }
table.code td { text-align: left; vertical-align: top; white-space: pre-wrap; word-break: break-word; border: none; padding: 0 4px; }
table.code td.only { background: #fff0c2; }
table.code code { font-size: 1em; }
";
