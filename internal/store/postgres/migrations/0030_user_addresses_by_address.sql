-- A wallet address's owners in every coin (UserAddressOwners: v2's
-- check-address without a currency, and the owner's payouts page filtered
-- by an address) by the address: the key (coin, address) leads with the
-- coin, so that read walked every address of every coin. Addresses are
-- registered seldom, so the index costs no payout anything.
CREATE INDEX user_addresses_address ON user_addresses (address);
