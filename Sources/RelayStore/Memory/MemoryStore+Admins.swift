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

    public func modelCalls(_ query: UsageQuery) throws -> [ModelCallRecord] {
        try withOpenContents { contents throws(StoreError) in contents.modelCalls.filter(query.matches).sorted { $0.at < $1.at } }
    }
}
