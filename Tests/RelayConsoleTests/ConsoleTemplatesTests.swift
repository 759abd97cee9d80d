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
        #expect(unescaped.isSubset(of: ["body", "budgetGauge", "commandsChart", "costChart"]), "\(name): \(unescaped)")
    }

    @Test func aValueIsEscapedOneScalarAtATime() {
        let shown = ConsoleTemplates.render("refusal", ["message": "\u{600}<b>\"\u{301}'&"])
        let escaped = "\u{600}&lt;b&gt;&quot;\u{301}&#39;&amp;"
        #expect(shown.contains(escaped), "\(shown)")
    }
}
