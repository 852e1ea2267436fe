//! Text read whole: a code block keeps its line breaks, a listed element's
//! text keeps the words of the listed elements inside it (a signature's
//! linked types), and text too long to show is cut between words or at a
//! line's end, never inside a token.

use crate::listed::line_of;
use crate::support::pages::bare_page;
use crate::support::tab::{act_ok, observe, with_page};

/// A documentation page: a type's signature whose types are links, in a
/// block that scrolls sideways (its first line fits, its last does not),
/// and an example in a code block.
const DOCS: &str = r#"<style>pre{font:13px monospace}</style>
<pre class="rust item-decl" style="overflow-x:auto;width:22em"><code>pub struct Vec&lt;T, A = <a class="struct" href="/alloc/struct.Global.html">Global</a>&gt;
<span class="where">where
    A: <a class="trait" href="/alloc/trait.Allocator.html">Allocator</a>,</span>{ /* private fields */ }</code></pre>
<p>Resizes the vector in place.</p>
<pre class="rust rust-example-rendered"><code><span class="kw">let</span> <span class="kw-2">mut</span> vec = <a href="/macro.vec.html">vec!</a>[<span class="string">"hello"</span>];
vec.resize(<span class="number">3</span>, <span class="string">"world"</span>); <span class="comment">// grows to three</span>
<span class="macro">assert_eq!</span>(vec, [<span class="string">"hello"</span>, <span class="string">"world"</span>, <span class="string">"world"</span>]);
</code></pre>"#;

/// The example's lines, as the page text must read them.
const EXAMPLE: &str = "let mut vec = vec![\"hello\"];\n\
                       vec.resize(3, \"world\"); // grows to three\n\
                       assert_eq!(vec, [\"hello\", \"world\", \"world\"]);";

#[test]
fn a_code_block_keeps_its_lines_in_the_page_text() {
    let html = bare_page(DOCS);
    with_page("/docs-lines", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let text = &state.page_text.text;
        assert!(
            text.contains(EXAMPLE),
            "the example lost words or lines:\n{text}"
        );
        assert!(
            text.contains(
                "pub struct Vec<T, A = Global>\nwhere\n    A: Allocator,{ /* private fields */ }"
            ),
            "{text}"
        );
        // read_page reads the same lines.
        let read = act_ok(&tab, Some(&state), serde_json::json!({"read_page": {}})).await;
        let whole = read["text"].as_str().unwrap_or_default();
        assert!(whole.contains(EXAMPLE), "{whole}");
    });
}

#[test]
fn a_signatures_line_holds_the_words_of_its_linked_types() {
    let html = bare_page(DOCS);
    with_page("/docs-signature", &html, |tab, _| async move {
        let state = observe(&tab).await;
        // The signature's block is listed (it scrolls) with its linked
        // types in its words, and the links under it with their own.
        let signature = line_of(&state, |e| e.tag == "pre");
        assert_eq!(
            signature.text,
            "pub struct Vec<T, A = Global> where A: Allocator,{ /* private fields */ }",
            "{}",
            state.listing
        );
        for link in ["Global", "Allocator"] {
            let child = line_of(&state, |e| e.tag == "a" && e.text == link);
            assert!(child.depth > 0, "{}", state.listing);
        }
        line_of(&state, |e| e.tag == "a" && e.text == "vec!");
    });
}

#[test]
fn an_elements_words_are_cut_between_words() {
    // 40 words of 7 letters: the listing's 100 characters end inside one.
    let words: Vec<String> = (0..40).map(|i| format!("word{i:03}")).collect();
    let html = bare_page(&format!(
        "<div onclick=\"1\" style=\"cursor:pointer\">{}</div>",
        words.join(" ")
    ));
    with_page("/long-words", &html, |tab, _| async move {
        let state = observe(&tab).await;
        let long = line_of(&state, |e| e.text.starts_with("word000"));
        let shown = long
            .text
            .strip_suffix('…')
            .expect("the text says it is cut");
        for token in shown.split(' ') {
            assert!(
                words.iter().any(|w| w == token),
                "{token:?} is half a word: {}",
                long.text
            );
        }
    });
}

#[test]
fn page_text_past_its_limit_ends_at_a_whole_line() {
    // Lines small enough that the text in view is past the observation's
    // 4,000 characters.
    let lines: String = (0..300)
        .map(|i| format!("<p>Line {i:03}: the quick brown fox jumps over the lazy dog.</p>"))
        .collect();
    let html = bare_page(&format!(
        "<style>p{{margin:0;font-size:6px;line-height:7px}}</style>{lines}"
    ));
    with_page("/long-text", &html, |tab, _| async move {
        let state = observe(&tab).await;
        assert!(state.page_text.clipped, "the page text is over its limit");
        let text = &state.page_text.text;
        for (n, line) in text.lines().enumerate() {
            assert_eq!(
                line,
                format!("Line {n:03}: the quick brown fox jumps over the lazy dog."),
                "the page text ends inside a line, or skips one"
            );
        }
        assert!(text.lines().count() > 50, "{text}");
    });
}
