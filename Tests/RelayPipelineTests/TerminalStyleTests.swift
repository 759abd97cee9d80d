import Foundation
import RelayCore
import TerminalAdapter
import Testing

/// Colour in the terminal: only on a terminal, never with `NO_COLOR` or `TERM=dumb`, and never in
/// the text itself.
@Suite("The terminal's colours")
struct TerminalStyleTests {
    @Test func colourOnlyOnATerminalThatTakesIt() {
        #expect(TerminalStyle.detect(isTerminal: true, environment: ["TERM": "xterm-256color"]).colors)
        #expect(!TerminalStyle.detect(isTerminal: true, environment: ["TERM": "xterm-256color", "NO_COLOR": "1"]).colors)
        #expect(TerminalStyle.detect(isTerminal: true, environment: ["TERM": "xterm-256color", "NO_COLOR": ""]).colors, "an empty NO_COLOR is unset")
        #expect(!TerminalStyle.detect(isTerminal: true, environment: ["TERM": "dumb"]).colors)
        #expect(!TerminalStyle.detect(isTerminal: true, environment: [:]).colors)
        // A pipe or a file (a script, a test) gets plain text.
        #expect(!TerminalStyle.detect(isTerminal: false, environment: ["TERM": "xterm-256color"]).colors)
        #expect(!TerminalStyle.detect(descriptor: -1, environment: ["TERM": "xterm-256color"]).colors)
    }

    @Test func colourDressesTheHeadingAndTheSmallPrintNotTheAnswer() {
        let reply = Reply(kind: .result, title: "Summary", body: "The answer.", notes: ["local · 1.0 s"])
        let coloured = PlainTextRenderer.render(reply, style: TerminalStyle(colors: true))
        #expect(coloured == "\u{1B}[1m▸ Summary\u{1B}[0m\nThe answer.\n\u{1B}[2m  local · 1.0 s\u{1B}[0m")
        #expect(PlainTextRenderer.render(reply) == "▸ Summary\nThe answer.\n  local · 1.0 s")
        let error = PlainTextRenderer.render(.error("Nope."), style: TerminalStyle(colors: true))
        #expect(error.hasPrefix("\u{1B}[1;31m✗ Error\u{1B}[0m"))
    }
}
