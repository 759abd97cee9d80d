import RelayCore

extension Relay {
    func customCommandAdmin(_ sub: CustomCommandSubcommand, _ request: RequestContext) async throws -> Reply {
        let team = request.event.team
        switch sub {
        case .add(let name, let template):
            guard !CommandTable.reservedNames.contains(name) else {
                throw RelayFailure("`\(name)` is a built-in command or chain block; custom commands cannot replace it. Pick another name.")
            }
            guard template.count <= Template.maxLength else {
                throw RelayFailure("The template is \(template.count) characters; the limit is \(Template.maxLength). Shorten it.")
            }
            let unknown = Template.unknownPlaceholders(in: template)
            guard unknown.isEmpty else {
                throw RelayFailure(
                    "Unknown placeholder \(unknown.map { "`\($0)`" }.joined(separator: ", ")). Templates can use \(Template.placeholders.map { "`\($0)`" }.joined(separator: " "))."
                )
            }
            if try await store.customCommand(team: team, name: name) == nil {
                guard request.customs.count < configuration.maxCustomCommandsPerTeam else {
                    throw RelayFailure("This team has \(request.customs.count) custom commands, the limit. Remove one with `/command remove NAME` first.")
                }
            }
            request.recorder.keep(.saveCustomCommand(CustomCommand(team: team, name: name, template: template, creator: request.event.user, createdAt: now())))
            return .info("Added `/\(name)`. Try `/\(name) <text>`.")
        case .list:
            guard !request.customs.isEmpty else {
                return .info("No custom commands yet. Add one with `/command add eli5 Explain like I'm five: {input}`.")
            }
            return .info(request.customs.map { "• `/\($0.name)` — \($0.template) (by \($0.creator))" }.joined(separator: "\n"), title: "Custom commands")
        case .remove(let name):
            guard request.customs.contains(where: { $0.name == name }) else {
                throw RelayFailure("There is no custom command `/\(name)`. `/command list` shows them.")
            }
            request.recorder.keep(.deleteCustomCommand(team: team, name: name))
            return .info("Removed `/\(name)`.")
        }
    }
}
