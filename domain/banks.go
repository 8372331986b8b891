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
// GET /utils/banks lists them. They are data, not rules: the lists come
// from the regulators' and clearing houses' published lists and must be
// refreshed from them when banks merge, are renamed or lose their licence.
//
//   - SouthAfrica: registered banks of the South African Reserve Bank's
//     Prudential Authority, with the universal branch codes the banks
//     publish for electronic (PASA / BankservAfrica) payments.
//   - Kenya: licensed commercial banks of the Central Bank of Kenya, with
//     the CBK bank codes used by the Kenya Bankers Association clearing
//     house (two digits; a branch code follows them in full sort codes).
//   - Nigeria: deposit money banks licensed by the Central Bank of Nigeria,
//     with their CBN / NIBSS bank codes (three digits). Heritage Bank is
//     left out: the CBN revoked its licence in June 2024.
//
// Only banks whose code could be checked are listed; a missing bank is added
// from the published list, never guessed.
var banks = map[string][]Bank{
	"SouthAfrica": {
		{"ABSA Bank", "632005"},
		{"African Bank", "430000"},
		{"Bank Zero", "888000"},
		{"Bidvest Bank", "462005"},
		{"Capitec Bank", "470010"},
		{"Discovery Bank", "679000"},
		{"First National Bank", "250655"},
		{"Investec Bank", "580105"},
		{"Nedbank", "198765"},
		{"Sasfin Bank", "683000"},
		{"Standard Bank", "051001"},
		{"TymeBank", "678910"},
	},
	"Kenya": {
		{"KCB Bank Kenya", "01"},
		{"Standard Chartered Bank Kenya", "02"},
		{"Absa Bank Kenya", "03"},
		{"Bank of India", "05"},
		{"Bank of Baroda (Kenya)", "06"},
		{"NCBA Bank Kenya", "07"},
		{"Prime Bank", "10"},
		{"Co-operative Bank of Kenya", "11"},
		{"National Bank of Kenya", "12"},
		{"Citibank N.A. Kenya", "16"},
		{"Bank of Africa Kenya", "19"},
		{"Consolidated Bank of Kenya", "23"},
		{"Credit Bank", "25"},
		{"Stanbic Bank Kenya", "31"},
		{"African Banking Corporation", "35"},
		{"Ecobank Kenya", "43"},
		{"Guaranty Trust Bank Kenya", "53"},
		{"I&M Bank", "57"},
		{"SBM Bank Kenya", "60"},
		{"HFC (Housing Finance Company of Kenya)", "61"},
		{"Diamond Trust Bank Kenya", "63"},
		{"Sidian Bank", "66"},
		{"Equity Bank Kenya", "68"},
		{"Family Bank", "70"},
		{"Gulf African Bank", "72"},
		{"United Bank for Africa Kenya", "76"},
	},
	"Nigeria": {
		{"Access Bank", "044"},
		{"Citibank Nigeria", "023"},
		{"Ecobank Nigeria", "050"},
		{"Fidelity Bank", "070"},
		{"First Bank of Nigeria", "011"},
		{"First City Monument Bank", "214"},
		{"Guaranty Trust Bank", "058"},
		{"Jaiz Bank", "301"},
		{"Keystone Bank", "082"},
		{"Polaris Bank", "076"},
		{"Providus Bank", "101"},
		{"Stanbic IBTC Bank", "221"},
		{"Standard Chartered Bank Nigeria", "068"},
		{"Sterling Bank", "232"},
		{"SunTrust Bank Nigeria", "100"},
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
	name = strings.TrimSpace(name)
	for _, b := range banks[country] {
		if strings.EqualFold(b.Name, name) {
			return b, true
		}
	}
	return Bank{}, false
}
