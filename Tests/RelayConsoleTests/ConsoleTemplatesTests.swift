import Foundation
import Testing

@testable import RelayConsole

/// Every template escapes by Unicode scalar (Mustache's own escaping compares characters, which
/// a combining mark or a Prepend scalar fools), and shows unescaped only the console's own HTML.
@Suite("Console: templates")
struct ConsoleTemplatesTests {
    @Test(arguments: ConsoleTemplates.all.keys.sorted())
    func eachTemplateEscapesByScalar(name: String) throws {
        let text = try #require(ConsoleTemplates.all[name])
        #expect(text.hasPrefix(ConsoleHTML.pragma), "\(name) starts with the pragma")
        let unescaped = Set(text.matches(of: /\{\{\{([^}]+)\}\}\}/).map { String($0.1) })
        #expect(
            unescaped.isSubset(of: ["body", "budgetGauge", "commandsChart", "costChart", "message", "notice", "error", "recordChart", "calibrationChart"]),
            "\(name): \(unescaped)")
    }

    @Test func aValueIsEscapedOneScalarAtATime() {
        // A chat reply's code spans become code, and nothing else it holds becomes markup.
        #expect(ConsoleHTML.chatText("Use `/admin <b>` or `x").html == "Use <code>/admin &lt;b&gt;</code> or `x")
        #expect(ConsoleHTML.chatText("`a` and `b`").html == "<code>a</code> and <code>b</code>")
        let hostile = "\u{600}<b>\"\u{301}'&"
        let shown = ConsoleTemplates.render(
            "signin", SignInValues(userName: hostile, team: "T1", platform: "test", base: "/console/", token: "t", minutes: 60))
        let escaped = "\u{600}&lt;b&gt;&quot;\u{301}&#39;&amp;"
        #expect(shown.contains(escaped), "\(shown)")
    }
}
