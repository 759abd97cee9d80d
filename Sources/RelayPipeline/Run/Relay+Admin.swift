import Foundation
import RelayCore

// `/admin` and the refusal of what only admins may do (docs/admin.md).
extension Relay {
    func adminCommand(_ sub: AdminSubcommand, _ request: RequestContext) async throws -> Reply {
        let event = request.event
        switch sub {
        case .show:
            let source = try await roles.source(for: event)
            let grants = try await store.adminGrants(platform: event.platform, team: event.team)
            let you: String
            switch source {
            case .platform?: you = "You administer this team, as one of the platform's own admins (\(roles.platformAdmins(event.platform)))."
            case .operatorList?: you = "You administer this team: the operator's list (`ADMIN_USERS`) names you."
            case .granted(let grant)?: you = "You administer this team: \(grant.grantedBy) granted you the role on \(Self.ledgerDate(grant.grantedAt)) UTC."
            case nil: you = "You do not administer this team."
            }
            let granted =
                grants.isEmpty
                ? "Nobody was granted the role here yet."
                : "Granted here: " + grants.map { "\($0.userName) (by \($0.grantedBy), \(Self.ledgerDate($0.grantedAt)) UTC)" }.joined(separator: ", ") + "."
            return .info(
                [
                    you,
                    "Admins are: \(roles.platformAdmins(event.platform)); the people the operator's list names; those an admin grants the role with `/admin grant @name`. \(granted)",
                    "They change channel settings, save, delete and import the team's chains and custom commands, and mark fact-checks.",
                    "Your entry for the operator's list: `\(OperatorAdmins.entry(platform: event.platform, team: event.team, user: event.user))`.",
                ].joined(separator: "\n"), title: "Admins")
        case .grant(let typed):
            let (id, name) = try await person(typed, event)
            guard id != event.user else { throw RelayFailure("You administer this team already.") }
            if let grant = try await store.adminGrant(platform: event.platform, team: event.team, user: id) {
                return .info("\(name) has the admin role already: \(grant.grantedBy) granted it on \(Self.ledgerDate(grant.grantedAt)) UTC.")
            }
            request.recorder.keep(
                .grantAdmin(AdminGrant(platform: event.platform, team: event.team, user: id, userName: name, grantedBy: event.userName, grantedAt: now())))
            return .info("\(name) is now an admin of this team. `/admin revoke \(name)` takes it back.")
        case .revoke(let typed):
            let grants = try await store.adminGrants(platform: event.platform, team: event.team)
            // Someone granted the role who has since left can no longer be mentioned: their
            // grant is found by the name it was made under, or by their id.
            if let grant = grants.first(where: { $0.userName.lowercased() == typed.lowercased() || $0.user == typed }) {
                request.recorder.keep(.revokeAdmin(platform: event.platform, team: event.team, user: grant.user))
                return .info("Took the admin role back from \(grant.userName).")
            }
            let (id, name) = try await person(typed, event)
            guard let grant = grants.first(where: { $0.user == id }) else {
                throw RelayFailure(
                    "\(name) was not granted the role here, so there is nothing to revoke. `/admin revoke` takes back only what `/admin grant` gave; the platform's own admins (\(roles.platformAdmins(event.platform))) and the operator's list are changed where they are kept."
                )
            }
            request.recorder.keep(.revokeAdmin(platform: event.platform, team: event.team, user: grant.user))
            return .info("Took the admin role back from \(name).")
        case .budget(let change):
            return try await budgetCommand(change, request)
        case .console:
            guard let console else {
                throw RelayFailure(
                    "The web console is off here: the operator turns it on with `CONSOLE_ENABLED=1` and the relay's public address in `PUBLIC_URL` (docs/console.md)."
                )
            }
            let link = try await console.link(
                for: ConsoleGrant(platform: event.platform, team: event.team, user: event.user, userName: event.userName), now: now())
            let minutes = Int((link.expiresAt.timeIntervalSince(now()) / 60).rounded())
            var reply = Reply.info(
                "Your sign-in link to this team's console, for you alone: \(link.url)\nIt works once, within \(minutes) minutes; `/admin console` makes another.",
                title: "Console")
            reply.isSecret = true
            return reply
        }
    }

    /// The person a mention names, or the refusal that says why it names nobody the role can go to.
    private func person(_ typed: String, _ event: Event) async throws -> (id: String, name: String) {
        let lookup: MentionedUserLookup
        if let reader = readers[event.platform] {
            lookup = await reader.user(mentioned: typed, in: event)
        } else if !event.mentions.isEmpty {
            lookup = MentionedUserLookup.among(event.mentions, typed)
        } else {
            // Teams, Google Chat, IRC, XMPP (docs/admin.md): no mention reaches the run with an
            // id, and on IRC and XMPP a nick is no identity — whoever takes it next would hold the role.
            throw RelayFailure(
                "Here the relay cannot tell whom `\(typed)` names, so it grants no role by mention: the operator's list (`ADMIN_USERS`) names this team's admins; `/admin` shows each person their entry for it."
            )
        }
        switch lookup {
        case .person(let id, let name): return (id, name)
        case .bot(let name): throw RelayFailure("\(name) is a bot: the admin role is for people.")
        case .nobody(let why): throw RelayFailure(why)
        case .unavailable(let why): throw RelayFailure("Could not find out who `\(typed)` is: \(why). Try again in a minute.")
        }
    }

    /// What someone who is not an admin is told: what they tried, and who may do it.
    func adminRefusal(_ kind: CommandKind, platform: String) -> String {
        let what: String
        switch kind {
        case .settings: what = "change this channel's settings (`/settings lang fr` changes yours)"
        case .chain(.save): what = "save the team's chains"
        case .chain(.delete): what = "delete the team's chains"
        case .chain(.importDefinitions): what = "import chains"
        case .command(.add): what = "add custom commands"
        case .command(.remove): what = "remove custom commands"
        case .ledger(.mark): what = "mark fact-checks (the marks teach the council whom to trust)"
        case .admin(.grant): what = "grant the admin role"
        case .admin(.revoke): what = "revoke the admin role"
        case .admin(.budget): what = "change the team's model budget"
        case .admin(.console): what = "open the team's web console"
        default: what = "do that"
        }
        return
            "Only this team's admins can \(what). Admins are: \(roles.platformAdmins(platform)); the people the operator's list names (`ADMIN_USERS`); those an admin grants the role with `/admin grant @name` (`/admin` shows them)."
    }
}
