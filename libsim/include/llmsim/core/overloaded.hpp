#pragma once
// std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, variant): one lambda per alternative.

namespace llmsim {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace llmsim
