import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Custom commands, in every store", .tags(.peers))
struct CustomCommandStoreTests {
    static func command(_ name: String, team: String = "T1", template: String = "Explain like I'm five: {input}")
        -> CustomCommand
    {
        CustomCommand(team: team, name: name, template: template, creator: "U1", createdAt: instant())
    }

    @Test("Save, read, list by name, delete", arguments: StoreKind.allCases)
    func crud(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            #expect(try await store.customCommand(team: "T1", name: "eli5") == nil)
            for name in ["eli5", "bullet", "haiku"] {
                try await store.saveCustomCommand(Self.command(name))
            }
            #expect(try await store.customCommand(team: "T1", name: "eli5") == Self.command("eli5"))
            #expect(try await store.customCommands(team: "T1").map(\.name) == ["bullet", "eli5", "haiku"])

            #expect(try await store.deleteCustomCommand(team: "T1", name: "bullet"))
            #expect(try await !store.deleteCustomCommand(team: "T1", name: "bullet"))
            #expect(try await store.customCommands(team: "T1").map(\.name) == ["eli5", "haiku"])
        }
    }

    @Test("Teams do not see each other's commands", arguments: StoreKind.allCases)
    func teamIsolation(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.saveCustomCommand(Self.command("eli5", team: "T1"))
            try await store.saveCustomCommand(Self.command("eli5", team: "T2", template: "Simply: {input}"))

            #expect(try await store.customCommand(team: "T2", name: "eli5")?.template == "Simply: {input}")
            #expect(try await store.deleteCustomCommand(team: "T2", name: "eli5"))
            #expect(try await store.customCommand(team: "T1", name: "eli5") == Self.command("eli5"))
            #expect(try await store.customCommands(team: "T2").isEmpty)
        }
    }

    @Test("Saving an existing name replaces the template and keeps the owner", arguments: StoreKind.allCases)
    func upsert(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.saveCustomCommand(Self.command("eli5"))
            var edited = Self.command("eli5", template: "Explain to a child, in {lang}: {input}")
            edited.creator = "ADMIN"
            edited.createdAt = instant(900)
            try await store.saveCustomCommand(edited)

            let stored = try #require(try await store.customCommand(team: "T1", name: "eli5"))
            #expect(stored.template == "Explain to a child, in {lang}: {input}")
            #expect(stored.creator == "U1")
            #expect(stored.createdAt == instant())
        }
    }
}
