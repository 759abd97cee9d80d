import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// `/admin`: who administers a team, and the role granted and revoked by its admins.
@Suite("Relay: team admins (/admin)")
struct AdminCommandTests {
    static let bob = [MentionedUser(shown: "@bob", id: "bob")]

    @Test func aMemberIsToldTheyAreNoAdminWhoIsAndTheirEntryForTheOperatorsList() async throws {
        try await RelayHarness.with { relay in
            let reply = await relay.send("/admin", user: "bob")
            #expect(reply.kind == .info)
            #expect(reply.body.hasPrefix("You do not administer this team."))
            #expect(reply.body.contains("Nobody was granted the role here yet."))
            #expect(reply.body.contains("`test:t:bob`"))
            #expect(await relay.send("/admin").body.hasPrefix("You administer this team: the operator's list (`ADMIN_USERS`) names you."))
        }
    }

    @Test func anAdminGrantsTheRoleAndRevokesItAndTheStoreKeepsIt() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/chain save mine = grammar", user: "bob").kind == .error)
            let granted = await relay.send("/admin grant @bob", mentions: Self.bob)
            #expect(granted.body == "@bob is now an admin of this team. `/admin revoke @bob` takes it back.")
            let grant = try #require(try await relay.store.adminGrant(platform: "test", team: "t", user: "bob"))
            #expect(grant.userName == "@bob" && grant.grantedBy == "ada")
            // Now bob may, and may grant in turn.
            #expect(await relay.send("/chain save mine = grammar", user: "bob").body.contains("Saved chain `mine`"))
            #expect(await relay.send("/admin", user: "bob").body.hasPrefix("You administer this team: ada granted you the role on "))
            #expect(await relay.send("/admin").body.contains("Granted here: @bob (by ada, "))
            #expect(await relay.send("/admin grant @bob", mentions: Self.bob).body.hasPrefix("@bob has the admin role already: ada granted it on "))

            #expect(await relay.send("/admin revoke @bob", mentions: Self.bob).body == "Took the admin role back from @bob.")
            #expect(try await relay.store.adminGrant(platform: "test", team: "t", user: "bob") == nil)
            #expect(await relay.send("/chain delete mine", user: "bob").body.hasPrefix("Only this team's admins can delete the team's chains."))
            let again = await relay.send("/admin revoke @bob", mentions: Self.bob)
            #expect(again.kind == .error && again.body.hasPrefix("@bob was not granted the role here, so there is nothing to revoke."))
            // Another team's admins are not this one's.
            let elsewhere = Event(platform: "test", team: "other", channel: "c", user: "ada", text: "/chain save x = grammar")
            #expect(await relay.relay.handle(elsewhere)?.body.hasPrefix("Only this team's admins can save") == true)
        }
    }

    @Test func aGrantNeedsAnAdminAPersonAndAMention() async throws {
        try await RelayHarness.with { relay in
            let refused = await relay.send("/admin grant @bob", user: "bob", mentions: Self.bob)
            #expect(refused.kind == .error && refused.body.hasPrefix("Only this team's admins can grant the admin role."))
            let grants = try await relay.store.adminGrants(platform: "test", team: "t")
            #expect(grants.isEmpty)

            let bot = await relay.send("/admin grant @helper", mentions: [MentionedUser(shown: "@helper", id: "B1", isBot: true)])
            #expect(bot.kind == .error && bot.body == "@helper is a bot: the admin role is for people.")
            let typed = await relay.send("/admin grant carol", mentions: Self.bob)
            #expect(typed.kind == .error && typed.body.contains("`carol` is not a mention of anyone"))
            // Where the platform passes no mention with an id, no grant is made by name.
            let unnamed = await relay.send("/admin grant carol")
            #expect(unnamed.kind == .error && unnamed.body.contains("the operator's list (`ADMIN_USERS`) names this team's admins"))
            let me = await relay.send("/admin grant @ada", mentions: [MentionedUser(shown: "@ada", id: "ada")])
            #expect(me.body == "You administer this team already.")
            #expect(await relay.send("/admin grant").body == "Name the person, as a mention: `/admin grant @ann`.")
            #expect(await relay.send("/admin promote @bob").body.hasPrefix("Unknown `/admin promote`."))
            #expect(try await relay.store.adminGrants(platform: "test", team: "t") == grants)
        }
    }

    @Test func theOperatorsListNamesAUserOfOneTeamOrOfEveryTeam() throws {
        let admins = try OperatorAdmins(parsing: " slack:T1:U1 , matrix:*:@root:example.org,teams:chat:19:abc:29:xyz", platforms: ["slack", "matrix", "teams"])
        #expect(admins.contains(platform: "slack", team: "T1", user: "U1"))
        #expect(!admins.contains(platform: "slack", team: "T2", user: "U1"))
        #expect(admins.contains(platform: "matrix", team: "mx:!room:example.org", user: "@root:example.org"))
        #expect(admins.contains(platform: "teams", team: "chat:19:abc", user: "29:xyz"))

        #expect(throws: OperatorAdminsError.self) { try OperatorAdmins(parsing: "slak:T1:U1", platforms: ["slack"]) }
        do {
            _ = try OperatorAdmins(parsing: "slack:T1:U1,irc:#x:ann", platforms: ["slack", "matrix"])
            Issue.record("an unknown platform was accepted")
        } catch {
            #expect(error.description == "`irc:#x:ann`: unknown platform `irc` (one of matrix, slack, then `:team:user`)")
        }
        do {
            _ = try OperatorAdmins(parsing: "slack:U1", platforms: ["slack"])
            Issue.record("an entry without a team was accepted")
        } catch {
            #expect(error.description == "`slack:U1`: give the team and the user after the platform, as `slack:TEAM:USER` (`/admin` shows yours)")
        }
    }
}
