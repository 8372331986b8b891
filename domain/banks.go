package domain

import "strings"

// Bank is one entry of the bank-name utility (GET /utils/banks, contract
// §5): the name a merchant's bankName must match and the bank's code in
// its country's clearing system.
type Bank struct {
	Name string
	Code string
}

// banks are the banks a merchant may be paid at, per country, in the order
// GET /utils/banks lists them. They are data, not rules: refresh them from
// the sources below when banks merge, are renamed or lose their licence.
// Names are spelled as each bank styles itself, except where a test pins an
// older spelling (noted). A name is stored on the merchant as listed here, so
// renaming an entry changes only merchants created afterwards.
//
// Only banks whose code two independent sources agree on are listed; a bank
// we could not confirm is named in a "left out" note instead of guessed. The
// sources are payment-industry lists, not the regulators' own registers
// (none of PASA's, the CBK's or the CBN's current code tables was available
// to check against), so a code that fails in production is a data bug to be
// fixed here from the bank's own published details.
//
// What Code means, per country:
//
//   - SouthAfrica: the bank's six-digit universal (generic) branch code, the
//     one branch code the bank publishes for EFT, debit-order and RTC/PayShap
//     payments into any of its accounts (PASA national payment system).
//     Sources: Peach Payments, Payouts, "Supported banks" table of bank names
//     and universal branch codes,
//     https://developer.peachpayments.com/docs/peach-payouts#supported-banks
//     (checked 2026-10-07; read as quoted in a public repository's notes);
//     MomoCalc, South Africa branch codes,
//     https://momocalc.com/codes/branch/south-africa/ (codes "verified June
//     2026"); Capitec's notice on Mercantile Bank (11 October 2021),
//     https://zabanks.co.za/mercantile-bank-news; consumer lists such as
//     https://we-sa.co.za/za/banking/sa-universal-branch-codes-fnb-standard-bank-nedbank-absa
//     and https://takechargeofyourmoney.blog/2021/10/20/universal-branch-codes/.
//   - Kenya: the two-digit bank code the Central Bank of Kenya assigns and the
//     Kenya Bankers Association clearing house uses (the first two digits of
//     a five-digit bank-branch sort code; PesaLink routes on it too).
//     Sources: Kulmi Pay, PesaLink bank codes,
//     https://developers.kulmipay.com/disbursements/bank-codes (undated);
//     PesaSwap, PesaPay bank codes,
//     https://docs.pesaswap.io/api-reference/payouts/pesapay--bank-codes.md
//     (read as quoted in a public repository); the KBA "Bank Branch Address
//     Listing" of 14 October 2011 and the bank directory of the CBK's Kenya
//     QR code standard (both read as quoted in public repositories), for the
//     banks that are not PesaLink members; CBK announcements for the current
//     names and ownership (below).
//   - Nigeria: the three-digit bank code the Central Bank of Nigeria assigns
//     (the "ABC" of the NUBAN, and the first three digits of a nine-digit
//     sort code), not NIBSS's six-digit NIP institution code. Sources: CBN,
//     Proposals on the implementation of the NUBAN scheme v0.4 (3 September
//     2010), table of 3-digit bank codes,
//     https://www.scribd.com/document/712968497/nuban-proposals-v-0-4-03-09-2010;
//     CBN list of licensed deposit money banks as at 26 April 2024, as
//     published by the press on 8 May 2024,
//     https://dailypost.ng/2024/05/08/cbn-releases-list-of-licensed-deposit-money-banks-in-nigeria/
//     and https://naija247news.com/2024/05/08/full-list-cbn-releases-licensed-deposit-money-banks/;
//     for banks licensed after 2010 (codes 100-107 and 301-303) the bank
//     lists of payment processors (Paystack's List Banks response and
//     Korapay's bank codes, as stored in public repositories), since no CBN
//     publication of those codes was available; one list swaps 105 and 107,
//     every other list, including Paystack's, has PremiumTrust 105 and
//     Optimus 107.
var banks = map[string][]Bank{
	// Registered banks (Banks Act) and mutual banks with a universal branch
	// code. Left out: Old Mutual Bank (OM Bank, launched 2025; only one
	// second-hand source, 462105, which we could not confirm); Grindrod
	// Bank (bought by African Bank in 2022, now "African Bank Business",
	// 584000 in one source only); Ubank (bought by African Bank); Mercantile
	// Bank (merged into Capitec, see Capitec Business); Finbond Mutual Bank
	// and HBZ Bank (one source each); RMB (pays through FNB's 250655);
	// branches of foreign banks (Citibank, HSBC, Standard Chartered, State
	// Bank of India, ...) and the Postbank, which are not registered banks.
	"SouthAfrica": {
		{"ABSA Bank", "632005"},                // styled "Absa Bank"; cmd/ledgerd's tests pin "ABSA Bank"
		{"Access Bank South Africa", "410506"}, // formerly the South African Bank of Athens / Grobank, same code
		{"African Bank", "430000"},
		{"Albaraka Bank", "800000"},
		{"Bank Zero", "888000"},
		{"Bidvest Bank", "462005"}, // Access Bank Plc agreed to buy it in 2025; still trades as Bidvest Bank
		{"Capitec Bank", "470010"},
		{"Capitec Business", "450105"}, // formerly Mercantile Bank, a division of Capitec Bank since 2021
		{"Discovery Bank", "679000"},
		{"First National Bank", "250655"},
		{"Investec Bank", "580105"},
		{"Nedbank", "198765"},
		{"Sasfin Bank", "683000"}, // Peach Payments routes 683000 as "Bidvest Bank Alliances" (Sasfin's accounts)
		{"Standard Bank", "051001"},
		{"TymeBank", "678910"},
	},
	// Commercial banks licensed by the CBK, by code. Current names after:
	// Barclays -> Absa Bank Kenya (2020); CBA + NIC -> NCBA (2019); Jamii
	// Bora -> Kingdom Bank (2020); Trans-National Bank -> Access Bank Kenya
	// (2020); Mayfair Bank -> Mayfair CIB Bank (2020); First Community Bank
	// -> Premier Bank Kenya (2023); Chase Bank -> SBM Bank Kenya (2018).
	// National Bank of Kenya was sold by KCB to Access Bank Plc in 2025
	// (CBK approval 4 April 2025) and still trades under its own name and
	// code. Left out: Spire Bank (code 49; its business went to Equity Bank
	// on 31 January 2023), Charterhouse Bank (64, under statutory
	// management), Imperial Bank (39) and Chase Bank (30), in receivership.
	"Kenya": {
		{"KCB Bank Kenya", "01"},
		{"Standard Chartered Bank Kenya", "02"},
		{"Absa Bank Kenya", "03"},
		{"Bank of India", "05"}, // not on PesaLink; KBA 2011 listing and CBK QR directory
		{"Bank of Baroda (Kenya)", "06"},
		{"NCBA Bank Kenya", "07"},
		{"Prime Bank", "10"},
		{"Co-operative Bank of Kenya", "11"},
		{"National Bank of Kenya", "12"},
		{"M-Oriental Bank", "14"},
		{"Citibank N.A. Kenya", "16"},
		{"Habib Bank AG Zurich", "17"},
		{"Middle East Bank Kenya", "18"},
		{"Bank of Africa Kenya", "19"},
		{"Consolidated Bank of Kenya", "23"},
		{"Credit Bank", "25"},
		{"Access Bank Kenya", "26"}, // not on PesaLink; Trans-National Bank's 26 in the KBA listing, Access Bank (Kenya) in the CBK QR directory
		{"Stanbic Bank Kenya", "31"},
		{"African Banking Corporation", "35"}, // trades as ABC Bank
		{"Ecobank Kenya", "43"},
		{"Paramount Bank", "50"},
		{"Kingdom Bank", "51"},
		{"Guaranty Trust Bank Kenya", "53"},
		{"Victoria Commercial Bank", "54"},
		{"Guardian Bank", "55"},
		{"I&M Bank", "57"},
		{"Development Bank of Kenya", "59"}, // not on PesaLink; KBA 2011 listing and CBK QR directory
		{"SBM Bank Kenya", "60"},
		{"HFC", "61"}, // HFC Limited (HF Group); both PesaLink lists say 61, the CBK QR directory as quoted says 83
		{"Diamond Trust Bank Kenya", "63"},
		{"Mayfair CIB Bank", "65"}, // Kulmi Pay lists it as "CIB Bank Kenya"
		{"Sidian Bank", "66"},
		{"Equity Bank Kenya", "68"},
		{"Family Bank", "70"},
		{"Gulf African Bank", "72"},
		{"Premier Bank Kenya", "74"},
		{"DIB Bank Kenya", "75"},
		{"UBA Kenya Bank", "76"},
	},
	// Commercial banks (international, national and regional authorisation)
	// and non-interest banks licensed by the CBN (list of 26 April 2024).
	// Providus Bank and Unity Bank agreed to merge in 2024-25; both still
	// clear under their own codes. Left out: Heritage Bank (licence revoked
	// 3 June 2024); The Alternative Bank (non-interest, licensed 2024: only
	// its NIP code 000037 could be found, not a CBN three-digit code);
	// merchant banks (Coronation, FBN Merchant, FSDH, Greenwich, Nova, Rand),
	// which do not take retail deposits.
	"Nigeria": {
		{"Access Bank", "044"},
		{"Citibank Nigeria", "023"},
		{"Ecobank Nigeria", "050"},
		{"Fidelity Bank", "070"},
		{"First Bank of Nigeria", "011"},
		{"First City Monument Bank", "214"},
		{"Globus Bank", "103"},
		{"Guaranty Trust Bank", "058"},
		{"Jaiz Bank", "301"},
		{"Keystone Bank", "082"},
		{"Lotus Bank", "303"},
		{"Optimus Bank", "107"},
		{"Parallex Bank", "104"}, // 526 in older lists was its microfinance-bank code
		{"Polaris Bank", "076"},
		{"PremiumTrust Bank", "105"},
		{"Providus Bank", "101"},
		{"Signature Bank", "106"},
		{"Stanbic IBTC Bank", "221"},
		{"Standard Chartered Bank Nigeria", "068"},
		{"Sterling Bank", "232"},
		{"SunTrust Bank Nigeria", "100"},
		{"TAJBank", "302"},
		{"Titan Trust Bank", "102"},
		{"Union Bank of Nigeria", "032"},
		{"United Bank for Africa", "033"},
		{"Unity Bank", "215"},
		{"Wema Bank", "035"},
		{"Zenith Bank", "057"},
	},
}

// Banks returns a copy of the banks of a merchant country (contract §5
// spelling: SouthAfrica, Kenya, Nigeria), and false for any other country.
func Banks(country string) ([]Bank, bool) {
	list, ok := banks[country]
	if !ok {
		return nil, false
	}
	return append([]Bank(nil), list...), true
}

// LookupBank finds a country's bank by name, compared case-insensitively
// after trimming, and returns it as listed.
func LookupBank(country, name string) (Bank, bool) {
	return findBank(banks[country], name)
}

// findBank finds a bank of list by name, as LookupBank does.
func findBank(list []Bank, name string) (Bank, bool) {
	name = strings.TrimSpace(name)
	for _, b := range list {
		if strings.EqualFold(b.Name, name) {
			return b, true
		}
	}
	return Bank{}, false
}
