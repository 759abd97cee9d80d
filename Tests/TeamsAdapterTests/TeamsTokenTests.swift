import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayTestSupport
import Testing

@testable import TeamsAdapter

/// Every request's bearer token, checked as the Bot Framework's channel validation does
/// (issue 42, points 1 and 9): what passes runs, anything else is 401 and nothing runs.
@Suite("Teams: the Bot Connector's tokens")
struct TeamsTokenTests {
    @Test func aSignedActivityRunsItsCommandWithoutTheMention() async throws {
        try await TeamsHarness.with { harness, client in
            let response = try await harness.post(harness.message("translate fr Good morning"), to: client)
            #expect(response.status == .ok)
            let submitted = harness.inbox.submissions
            #expect(submitted.count == 1)
            #expect(submitted.first?.0.text == "/translate fr Good morning")
            #expect(submitted.first?.0.team == TeamsHarness.team)
            #expect(submitted.first?.0.thread == "1700000000001")
        }
    }

    /// Each refused token: its status, its reason in the body, and nothing submitted.
    @Test func everyBadTokenIs401AndRunsNothing() async throws {
        try await TeamsHarness.with { harness, client in
            let framework = harness.framework
            let now = harness.clock.now
            let stranger = try TestRSAKey(kid: "fake-bot-connector-key-1")
            let cases: [(String, String?, String)] = [
                ("no token", nil, "No Authorization header"),
                ("not a JWT", "not.a-jwt", "not a JWT"),
                ("forged: the same kid, another key", framework.activityToken(now: now, key: stranger), "signature does not match"),
                ("expired past the 5-minute skew", framework.activityToken(now: now.addingTimeInterval(-601)), "expired"),
                ("not valid yet", framework.activityToken(now: now, claims: ["nbf": .int(Int(now.timeIntervalSince1970) + 900)]), "not valid yet"),
                ("another bot's", framework.activityToken(now: now, claims: ["aud": "99999999-0000-4000-8000-000000000000"]), "another bot"),
                ("another issuer", framework.activityToken(now: now, claims: ["iss": "https://sts.windows.net/evil/"]), "not issued by"),
                ("another service", framework.activityToken(serviceURL: "https://smba.example.net/emea/", now: now), "another serviceUrl"),
                ("no expiry", framework.activityToken(now: now, claims: ["exp": .null]), "no expiry"),
                ("HS256", framework.token(header: ["alg": "HS256", "kid": "fake-bot-connector-key-1"]), "RS256"),
                ("alg none", framework.token(header: ["alg": "none", "kid": "fake-bot-connector-key-1"]), "RS256"),
                ("no kid", framework.token(header: ["alg": "RS256"]), "no signing key"),
                ("an unknown kid", framework.token(header: ["alg": "RS256", "kid": "nobody-knows-this-key"]), "does not publish"),
            ]
            for (name, token, reason) in cases {
                let response = try await harness.post(harness.message("fix teh cat"), token: token, to: client)
                #expect(response.status == .unauthorized, "\(name)")
                let body = String(buffer: response.body)
                #expect(body.contains(reason), "\(name): \(body)")
            }
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    @Test func withinTheClockSkewATokenStillPasses() async throws {
        try await TeamsHarness.with { harness, client in
            let token = harness.framework.activityToken(now: harness.clock.now.addingTimeInterval(-500))
            let response = try await harness.post(harness.message("fix teh cat"), token: token, to: client)
            #expect(response.status == .ok)
            #expect(harness.inbox.submissions.count == 1)
        }
    }

    /// The token's `serviceurl` must be the activity's, which must be https (or loopback http):
    /// an activity that names another service with a token for this one is refused.
    @Test func theActivitysServiceURLMustBeTheTokens() async throws {
        try await TeamsHarness.with { harness, client in
            let forged = harness.message("fix teh cat", serviceURL: "https://attacker.example/")
            #expect(try await harness.post(forged, to: client).status == .unauthorized)
            let plain = "http://smba.example.net/amer/"
            let activity = harness.message("fix teh cat", serviceURL: plain)
            let token = harness.framework.activityToken(serviceURL: plain, now: harness.clock.now)
            let response = try await harness.post(activity, token: token, to: client)
            #expect(response.status == .unauthorized)
            #expect(String(buffer: response.body).contains("https"))
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    /// A key must be endorsed for the activity's channel (`channelId`).
    @Test func aKeyNotEndorsedForTheChannelIsRefused() async throws {
        try await TeamsHarness.with { harness, client in
            let other = try TestRSAKey(kid: "skype-only-key")
            harness.framework.publish(other, endorsements: ["skype"])
            let token = harness.framework.activityToken(now: harness.clock.now, key: other)
            let response = try await harness.post(harness.message("fix teh cat"), token: token, to: client)
            #expect(response.status == .unauthorized)
            #expect(String(buffer: response.body).contains("not endorsed"))
        }
    }

    /// Keys are fetched once for many requests; an unknown `kid` fetches them again, at most once
    /// a minute; a rotated-in key is then taken.
    @Test func keysAreCachedAndRefetchedForAnUnknownKidAtMostOnceAMinute() async throws {
        try await TeamsHarness.with { harness, client in
            for _ in 0..<5 { #expect(try await harness.post(harness.message("fix teh cat"), to: client).status == .ok) }
            #expect(harness.framework.counts.keys == 1)
            #expect(harness.framework.counts.metadata == 1)
            let rotated = try TestRSAKey(kid: "fake-bot-connector-key-2")
            // Within a minute of the first fetch, an unknown kid fetches nothing.
            let first = harness.framework.activityToken(now: harness.clock.now, key: rotated)
            #expect(try await harness.post(harness.message("fix teh cat"), token: first, to: client).status == .unauthorized)
            #expect(harness.framework.counts.keys == 1)
            harness.clock.advance(by: .seconds(61))
            // Not yet published: refused, after one fetch more.
            let early = harness.framework.activityToken(now: harness.clock.now, key: rotated)
            #expect(try await harness.post(harness.message("fix teh cat"), token: early, to: client).status == .unauthorized)
            #expect(harness.framework.counts.keys == 2)
            harness.framework.publish(rotated)
            // Within the minute: still unknown, and no fetch.
            for _ in 0..<3 {
                #expect(try await harness.post(harness.message("fix teh cat"), token: early, to: client).status == .unauthorized)
            }
            #expect(harness.framework.counts.keys == 2)
            harness.clock.advance(by: .seconds(61))
            let later = harness.framework.activityToken(now: harness.clock.now, key: rotated)
            #expect(try await harness.post(harness.message("fix teh cat"), token: later, to: client).status == .ok)
            #expect(harness.framework.counts.keys == 3)
            #expect(harness.inbox.submissions.count == 6)
        }
    }
}
