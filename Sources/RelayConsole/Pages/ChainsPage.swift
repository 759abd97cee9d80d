import Foundation
import RelayCore
import RelayPipeline

/// Chains and custom commands (docs/console.md): listed, and changed by running the chat's own
/// commands (`/chain save`, `/chain delete`, `/chain import`, `/command add`, `/command remove`)
/// as the signed-in admin, so a change here is checked exactly as in chat; a refusal is shown
/// beside the form, with what was typed kept.
struct ChainsPage {
    let relay: Relay
    let grant: ConsoleGrant
    let csrf: String
    let base: String

    /// What the page says after a change: the relay's answer, and whether it was a refusal; and
    /// what the person typed, kept in the form a refusal names.
    struct Outcome {
        var message: String
        var refused: Bool
        var kept = Kept()
    }

    struct Kept {
        var name = ""
        var source = ""
        var commandName = ""
        var template = ""
        var importText = ""
    }

    var action: String { base + ConsoleRoutes.segment(grant.platform) + "/" + ConsoleRoutes.segment(grant.team) }

    func body(outcome: Outcome? = nil) async throws -> TrustedHTML {
        let chains = try await relay.store.chains(team: grant.team)
        let commands = try await relay.store.customCommands(team: grant.team)
        let values = ChainsValues(
            action: action, csrf: csrf, notice: outcome.flatMap { $0.refused ? nil : ConsoleHTML.chatText($0.message) },
            error: outcome.flatMap { $0.refused ? ConsoleHTML.chatText($0.message) : nil }, hasChains: !chains.isEmpty,
            chains: chains.map { ChainRow(name: $0.name, source: $0.source, updated: ConsoleDates.day($0.updatedAt), by: $0.creator) },
            hasCommands: !commands.isEmpty, commands: commands.map { CommandRow(name: $0.name, template: $0.template) },
            kept: outcome?.kept ?? Kept())
        return TrustedHTML(html: ConsoleTemplates.render("chains", values))
    }

    /// The team's chains as `/chain export` gives them: `NAME = DSL` lines, which `/chain import`
    /// (and the import form) takes back.
    static func export(_ chains: [SavedChain]) -> String {
        chains.map(\.exportLine).joined(separator: "\n") + (chains.isEmpty ? "" : "\n")
    }

    /// The chat command a form stands for, or nil when the form is not one of them.
    static func commandLine(_ change: String, _ form: ChangeForm) -> String? {
        // One line each: a chain or a template is one line of text in chat too.
        func line(_ text: String?) -> String {
            (text ?? "").split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
        }
        switch change {
        case "save": return "/chain save \(line(form.name)) = \(line(form.source))"
        case "delete": return "/chain delete \(line(form.name))"
        case "import": return "/chain import\n" + (form.text ?? "")
        case "add": return "/command add \(line(form.name)) \(line(form.template))"
        case "remove": return "/command remove \(line(form.name))"
        default: return nil
        }
    }
}

struct ChangeForm: ProtectedForm {
    var csrf: String
    var name: String?
    var source: String?
    var template: String?
    var text: String?
}

struct ChainsValues {
    var action: String
    var csrf: String
    var notice: TrustedHTML?
    var error: TrustedHTML?
    var hasChains: Bool
    var chains: [ChainRow]
    var hasCommands: Bool
    var commands: [CommandRow]
    var kept: ChainsPage.Kept
}

struct ChainRow {
    var name: String
    var source: String
    var updated: String
    var by: String
}

struct CommandRow {
    var name: String
    var template: String
}
