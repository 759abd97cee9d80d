import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Settings, in every store", .tags(.peers))
struct SettingsStoreTests {
    let alice = SettingsScope.user(team: "T1", user: "alice")
    let general = SettingsScope.channel(team: "T1", channel: "general")

    @Test("Nothing stored reads as empty settings", arguments: StoreKind.allCases)
    func emptyByDefault(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.settings(alice) == Settings())
            #expect(try await store.settings(general) == Settings())
        }
    }

    @Test("User and channel settings are stored apart, per team", arguments: StoreKind.allCases)
    func perScope(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            try await store.saveSettings(Settings(lang: "fr", tier: .frontier), for: alice)
            try await store.saveSettings(Settings(retention: .metadata), for: general)

            #expect(try await store.settings(alice) == Settings(lang: "fr", tier: .frontier))
            #expect(try await store.settings(general) == Settings(retention: .metadata))
            // Same subject string, other kind or other team: separate rows.
            #expect(try await store.settings(.channel(team: "T1", channel: "alice")).isEmpty)
            #expect(try await store.settings(.user(team: "T2", user: "alice")).isEmpty)
            #expect(try await store.settings(.user(team: "T1", user: "bob")).isEmpty)
        }
    }

    @Test("The voice setting is kept and cleared like the others", arguments: StoreKind.allCases)
    func voice(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            try await store.saveSettings(Settings(voice: .tribunal), for: alice)
            try await store.saveSettings(Settings(lang: "fr", voice: .ai), for: general)
            #expect(try await store.settings(alice) == Settings(voice: .tribunal))
            #expect(try await store.settings(general) == Settings(lang: "fr", voice: .ai))
            try await store.saveSettings(Settings(lang: "fr"), for: general)
            #expect(try await store.settings(general) == Settings(lang: "fr"))
        }
    }

    @Test("Saving replaces the scope's settings; nil fields become unset", arguments: StoreKind.allCases)
    func update(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            try await store.saveSettings(Settings(lang: "fr", tier: .cheap, retention: .full), for: alice)
            try await store.saveSettings(Settings(lang: "de", retention: .off), for: alice)
            #expect(try await store.settings(alice) == Settings(lang: "de", retention: .off))
        }
    }

    @Test("Saving empty settings clears the scope", arguments: StoreKind.allCases)
    func clearing(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            try await store.saveSettings(Settings(lang: "es"), for: alice)
            try await store.saveSettings(Settings(tier: .mid), for: general)
            try await store.saveSettings(Settings(), for: alice)
            #expect(try await store.settings(alice).isEmpty)
            #expect(try await store.settings(general) == Settings(tier: .mid))
            // Clearing a scope that has nothing is fine.
            try await store.saveSettings(Settings(), for: alice)
        }
    }

    /// Every tier with every retention, in one argument list: Swift Testing combines at most two.
    static let everyTierAndRetention: [Settings] = Tier.allCases.flatMap { tier in
        Retention.allCases.map { Settings(lang: "ja", tier: tier, retention: $0) }
    }

    @Test("Every tier and retention round-trips", arguments: StoreKind.allCases, everyTierAndRetention)
    func roundTrip(kind: StoreKind, settings: Settings) async throws {
        try await withStore(kind) { store throws in
            try await store.saveSettings(settings, for: general)
            #expect(try await store.settings(general) == settings)
        }
    }
}
