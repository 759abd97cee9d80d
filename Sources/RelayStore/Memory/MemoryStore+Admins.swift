public import RelayCore
import RelayPipeline

extension MemoryStore {
    public func adminGrants(platform: String, team: String) throws -> [AdminGrant] {
        try withOpenContents { contents throws(StoreError) in contents.adminGrants[[ExactText(platform), ExactText(team)]] ?? [] }
    }

    public func adminGrant(platform: String, team: String, user: String) throws -> AdminGrant? {
        try withOpenContents { contents throws(StoreError) in
            contents.adminGrants[[ExactText(platform), ExactText(team)]]?.first { ExactText($0.user) == ExactText(user) }
        }
    }
}
