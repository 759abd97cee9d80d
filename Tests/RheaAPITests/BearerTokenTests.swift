import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import RheaAPI

/// Bearer tokens read at a time the test names, so every limit is checked at its edge: expiry
/// and `nbf` within the clock skew, the longest lifetime. (`serve`'s tests check that a refusal
/// is a 401 whose detail is the reason given here.)
@Suite("Rhea API: bearer tokens")
struct BearerTokenTests {
    static let secret = "a-jwt-secret-of-at-least-32-characters!"
    static let now = 1_800_000_000.0
    static let soon = JSONValue.double(now + 3600)

    static func subject(
        _ claims: JSONValue, header: JSONValue = ["alg": "HS256", "typ": "JWT"], lifetime: Duration = .seconds(30 * 86_400)
    ) async -> Result<String, BearerToken.Refusal> {
        let token = TestJWT.hs256(claims, secret: secret, header: header)
        return await subject(of: token, lifetime: lifetime)
    }

    static func subject(of token: String, lifetime: Duration = .seconds(30 * 86_400)) async -> Result<String, BearerToken.Refusal> {
        await BearerToken(secret: secret, clockSkew: .seconds(60), maxLifetime: lifetime).subject(of: token, now: Date(timeIntervalSince1970: now))
    }

    @Test func claimsMustBeNumbersWithinTheirLimits() async {
        let now = Self.now
        let refused: [(JSONValue, String)] = [
            (["sub": "42", "exp": Self.soon, "nbf": "0"], "the bearer token's nbf must be a number (seconds since 1970)"),
            (["sub": "42", "exp": .string(String(Int(now) + 3600))], "the bearer token's exp must be a number (seconds since 1970)"),
            (["sub": "42", "exp": Self.soon, "iat": "yesterday"], "the bearer token's iat must be a number (seconds since 1970)"),
            (["sub": "42", "exp": .null], "the bearer token's exp must be a number (seconds since 1970)"),
            (["sub": "42"], "the bearer token has no expiry (exp)"),
            (["sub": "42", "exp": 1e308], "the bearer token's expiry (exp) is more than 2592000 seconds ahead, further than this server accepts"),
            (
                ["sub": "42", "exp": .double(now + 31 * 86_400)],
                "the bearer token's expiry (exp) is more than 2592000 seconds ahead, further than this server accepts"
            ),
            (["sub": "42", "exp": -1e308], "the bearer token has expired; log in again for a fresh one"),
            (["sub": "42", "exp": Self.soon, "nbf": 1e308], "the bearer token is not valid yet"),
            (["sub": "42", "exp": Self.soon, "nbf": .double(now + 600)], "the bearer token is not valid yet"),
            (["exp": Self.soon], "the bearer token has no subject (sub)"),
            (["sub": "", "exp": Self.soon], "the bearer token has no subject (sub)"),
            (["sub": 1e300, "exp": Self.soon], "the bearer token has no subject (sub)"),
            (["sub": .string(String(repeating: "s", count: 257)), "exp": Self.soon], "the bearer token's subject (sub) is longer than 256 bytes"),
            ([1, 2], "the bearer token's claims are not a JSON object"),
        ]
        for (claims, reason) in refused {
            #expect(await Self.subject(claims) == .failure(.init(reason)), "\(claims)")
        }

        // Within limits: an integer subject, 29 days ahead, numbers for nbf and iat.
        #expect(await Self.subject(["sub": 42, "exp": Self.soon]) == .success("42"))
        #expect(await Self.subject(["sub": "ada", "exp": .double(now + 29 * 86_400), "nbf": .double(now + 30), "iat": .double(now)]) == .success("ada"))
        let longest = String(repeating: "s", count: 256)
        #expect(await Self.subject(["sub": .string(longest), "exp": .double(now - 30)]) == .success(longest))
    }

    @Test func theClockSkewHoldsToTheSecondEachWay() async {
        let now = Self.now
        let expired = BearerToken.Refusal("the bearer token has expired; log in again for a fresh one")
        #expect(await Self.subject(["sub": "42", "exp": .double(now - 60)]) == .success("42"), "an expiry just passed, within the skew")
        #expect(await Self.subject(["sub": "42", "exp": .double(now - 60.5)]) == .failure(expired))
        #expect(await Self.subject(["sub": "42", "exp": .double(now - 600)]) == .failure(expired))
        #expect(await Self.subject(["sub": "42", "exp": Self.soon, "nbf": .double(now + 60)]) == .success("42"))
        #expect(await Self.subject(["sub": "42", "exp": Self.soon, "nbf": .double(now + 60.5)]) == .failure(.init("the bearer token is not valid yet")))
    }

    @Test func theLongestLifetimeIsASettingWithTheSkewBeyondIt() async {
        let now = Self.now
        let tooFar = BearerToken.Refusal("the bearer token's expiry (exp) is more than 3600 seconds ahead, further than this server accepts")
        #expect(await Self.subject(["sub": "42", "exp": .double(now + 86_400)], lifetime: .seconds(3600)) == .failure(tooFar))
        #expect(await Self.subject(["sub": "42", "exp": .double(now + 3000)], lifetime: .seconds(3600)) == .success("42"))
        #expect(await Self.subject(["sub": "42", "exp": .double(now + 3660)], lifetime: .seconds(3600)) == .success("42"))
        #expect(await Self.subject(["sub": "42", "exp": .double(now + 3661)], lifetime: .seconds(3600)) == .failure(tooFar))
    }

    @Test func onlyHS256WithThisServersSecretAndOnlyJWTs() async {
        // Signed with this server's secret by HS256, but naming another algorithm: refused.
        for alg in ["HS512", "none", "RS256"] {
            let header: JSONValue = .object(["alg": .string(alg), "typ": "JWT"])
            #expect(
                await Self.subject(["sub": "42", "exp": Self.soon], header: header) == .failure(.init("the bearer token must be signed with HS256")), "\(alg)")
        }
        let forged = TestJWT.hs256(["sub": "42", "exp": Self.soon], secret: "another-secret-of-at-least-32-chars!!")
        #expect(await Self.subject(of: forged) == .failure(.init("the bearer token's signature does not match")))
        for garbage in ["not-a-jwt", "a.b", "a.b.c.d", String(repeating: "x", count: 20_000)] {
            #expect(await Self.subject(of: garbage) == .failure(.init("the bearer token is not a JWT (three base64url parts)")), "\(garbage.prefix(20))")
        }
    }
}
