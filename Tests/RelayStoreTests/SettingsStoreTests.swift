import RelayCore
import RelayStore
import Testing

@Suite("Settings in the SQLite store")
struct SettingsStoreTests {
    let alice = SettingsScope.user(team: "T1", user: "alice")
    let general = SettingsScope.channel(team: "T1", channel: "general")

    @Test("Nothing stored reads as empty settings")
    func emptyByDefault() async throws {
        try await withTemporaryStore { store throws in
            #expect(try await store.settings(alice) == Settings())
            #expect(try await store.settings(general) == Settings())
        }
    }

    @Test("User and channel settings are stored apart, per team")
    func perScope() async throws {
        try await withTemporaryStore { store throws in
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

    @Test("Saving replaces the scope's settings; nil fields become unset")
    func update() async throws {
        try await withTemporaryStore { store throws in
            try await store.saveSettings(Settings(lang: "fr", tier: .cheap, retention: .full), for: alice)
            try await store.saveSettings(Settings(lang: "de", retention: .off), for: alice)
            #expect(try await store.settings(alice) == Settings(lang: "de", retention: .off))
        }
    }

    @Test("Saving empty settings clears the scope")
    func clearing() async throws {
        try await withTemporaryStore { store throws in
            try await store.saveSettings(Settings(lang: "es"), for: alice)
            try await store.saveSettings(Settings(tier: .mid), for: general)
            try await store.saveSettings(Settings(), for: alice)
            #expect(try await store.settings(alice).isEmpty)
            #expect(try await store.settings(general) == Settings(tier: .mid))
            // Clearing a scope that has nothing is fine.
            try await store.saveSettings(Settings(), for: alice)
        }
    }

    @Test("Every tier and retention round-trips", arguments: Tier.allCases, Retention.allCases)
    func roundTrip(tier: Tier, retention: Retention) async throws {
        try await withTemporaryStore { store throws in
            let settings = Settings(lang: "ja", tier: tier, retention: retention)
            try await store.saveSettings(settings, for: general)
            #expect(try await store.settings(general) == settings)
        }
    }
}
